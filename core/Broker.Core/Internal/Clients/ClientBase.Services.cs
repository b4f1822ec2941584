using System.Buffers;
using Broker.Core.Auth;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Service imports on the publishing side (client.go <c>processServiceImport</c>): a publish that reached an account's
/// import client is forwarded by its producer, on the producer's thread and in the same batch, into the exporter's
/// index under the import's subject (and the exporter's mappings), with a reply routing the responses back and the
/// <c>Nats-Request-Info</c> header; a response reaching an exporter's <c>_R_.</c> subscription goes back the same way to
/// the requester's reply. The imports already crossed by the message being forwarded stop loops.
/// </summary>
internal abstract partial class ClientBase
{
    private static readonly byte[] JetStreamAckPrefix = "$JS.ACK."u8.ToArray();

    // The service imports the message being forwarded has crossed (nats-server's c.pa.psi); the producer's own thread only.
    private ServiceImport[]? serviceChain;
    private int serviceChainCount;

    // The last plain Nats-Request-Info line this producer sent, with the round trip and account it was made for.
    private byte[]? plainRequestInfo;
    private long plainRequestInfoRtt;
    private Account? plainRequestInfoAccount;

    /// <summary>Whether this producer is forwarding across a service import now: shadows of stream imports are skipped.</summary>
    private bool Forwarding => serviceChainCount > 0;

    /// <summary>
    /// Takes back the count of a delivery to an account's import client (the caller counted it): nats-server counts no
    /// delivery to an internal subscription; the forwarded deliveries are counted as they are made.
    /// </summary>
    private void UncountDelivery(long size)
    {
        batchOutMessages--;
        batchOutBytes -= size;
    }

    /// <summary>
    /// Forwards a message that matched a subscription of an account's import client: across its service import, or,
    /// for the subscription on the account's response prefix, back along the route of the reply it was published to.
    /// The delivery was counted by the caller and is taken back (nats-server counts none to internal subscriptions).
    /// </summary>
    internal void ForwardToImportClient(Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        UncountDelivery(headers.Length + payload.Length);
        var account = subscription.Client.Account;
        if (subscription.ServiceImport is { } import)
        {
            ForwardService(import, account, subject, deliverAs, replyTo, headers, payload);
        }
        else if (account.Responses.Find(subject) is { } route)
        {
            ForwardService(route, account, subject, deliverAs, replyTo, headers, payload);
        }
    }

    /// <summary>
    /// Forwards a message routed by <paramref name="subject"/> that matched <paramref name="import"/> in
    /// <paramref name="source"/> (the account the import or route lives in) to its destination. A message delivered as
    /// another subject (JetStream's stored subject, <paramref name="deliverAs"/>) keeps it, as nats-server passes its
    /// deliver subject through.
    /// </summary>
    private void ForwardService(ServiceImport import, Account source, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        for (var i = serviceChainCount - 1; i >= 0; i--)
        {
            var crossed = serviceChain![i];
            if (ReferenceEquals(crossed, import) || (import.Export is not null && ReferenceEquals(crossed.Export, import.Export)))
            {
                return;
            }
        }

        var isResponse = import.IsResponse;
        var destination = import.Destination;
        var to = isResponse ? import.ToBytes : import.Target(subject);
        if (destination.Mappings is { } mappings)
        {
            to = mappings.Map(to, new MappingScratch());
        }

        // A reply is replaced by a route back, except JetStream's acks, which pass as they are (pull consumers across accounts).
        ServiceImport? route = null;
        var reply = replyTo;
        if (!replyTo.IsEmpty && !replyTo.StartsWith(JetStreamAckPrefix))
        {
            route = destination.Responses.Add(Server, source, replyTo, import);
            reply = route.FromBytes;
        }

        var forwarded = headers;
        if (!isResponse && RequestInfoLine(import, source, headers) is { } line)
        {
            forwarded = new ReadOnlySequence<byte>(RequestInfoHeader.Compose(headers, line));
        }

        serviceChain ??= new ServiceImport[4];
        if (serviceChainCount == serviceChain.Length)
        {
            Array.Resize(ref serviceChain, serviceChain.Length * 2);
        }

        serviceChain[serviceChainCount++] = import;
        int delivered;
        try
        {
            delivered = DeliverToAll(destination.SubList.Match(to), to, deliverAs.SequenceEqual(subject) ? to : deliverAs, reply, forwarded, payload);
        }
        finally
        {
            serviceChain[--serviceChainCount] = null!;
        }

        // A route goes after its one response, after an empty message (the end of a stream), or when nobody took it.
        var remove = delivered == 0 || (isResponse && (import.ResponseType == ServiceResponseType.Singleton || (headers.IsEmpty && payload.IsEmpty)));
        if (!remove && isResponse)
        {
            import.Touch();
        }

        if (remove)
        {
            if (isResponse)
            {
                source.Responses.Remove(import);
            }
            else if (route is not null)
            {
                destination.Responses.Remove(route);
            }
        }
    }

    // The Nats-Request-Info line for a request; the plain one ({"acc","rtt"}) is kept while the round trip stays the same.
    private byte[]? RequestInfoLine(ServiceImport import, Account source, in ReadOnlySequence<byte> headers)
    {
        if (serviceChainCount > 0 || import.Share || import.Destination.IsSystem || IsSystemClient)
        {
            return RequestInfo(import, source, headers)?.Line();
        }

        var rtt = RoundTripNanoseconds;
        if (plainRequestInfo is null || plainRequestInfoRtt != rtt || !ReferenceEquals(plainRequestInfoAccount, Account))
        {
            plainRequestInfo = new RequestInfoHeader { Account = Account.Name, Rtt = rtt }.Line();
            plainRequestInfoRtt = rtt;
            plainRequestInfoAccount = Account;
        }

        return plainRequestInfo;
    }

    // The requester's details for the exporter; null for the system account's own client (nats-server's kind SYSTEM
    // has none) and for a request already forwarded whose header is missing.
    private RequestInfoHeader? RequestInfo(ServiceImport import, Account source, in ReadOnlySequence<byte> headers)
    {
        if (IsSystemClient)
        {
            return null;
        }

        var systemImport = import.Destination.IsSystem;
        if (serviceChainCount > 0)
        {
            var share = serviceChain![serviceChainCount - 1].Share;
            var previous = RequestInfoHeader.Read(headers);
            if (previous is null)
            {
                return null;
            }

            previous.Service = source.Name;
            if (!share && (import.Share || systemImport))
            {
                previous.Server ??= Server.ServerName;
            }

            return previous;
        }

        var info = new RequestInfoHeader { Account = Account.Name, Rtt = RoundTripNanoseconds };
        if (import.Share)
        {
            info.Server = Server.ServerName;
            DescribeForRequestInfo(info);
        }
        else if (systemImport)
        {
            info.Server = Server.ServerName;
        }

        return info;
    }

    /// <summary>The measured round-trip time in nanoseconds, 0 until measured (nats-server's <c>c.rtt</c>).</summary>
    protected virtual long RoundTripNanoseconds => 0;

    /// <summary>Adds the details a <c>share</c> import passes on (nats-server's detailed <c>getClientInfo</c>).</summary>
    protected virtual void DescribeForRequestInfo(RequestInfoHeader info)
    {
        info.Start = RequestInfoHeader.FormatStart(StartedAt);
        info.Id = Id;
        info.User = AuthorizedUser;
        info.Name = Name;
        info.Kind = "Client";
        info.ClientType = "nats";
    }
}
