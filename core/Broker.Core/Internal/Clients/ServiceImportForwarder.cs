using System.Buffers;
using Broker.Core.Auth;
using Broker.Core.Internal.Accounts;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// One producer's forwarding across service imports (client.go <c>processServiceImport</c>): a publish that reached an
/// account's import client is forwarded on the producer's thread and in the same batch into the exporter's index under
/// the import's subject (and the exporter's mappings), with a reply routing the responses back and the
/// <c>Nats-Request-Info</c> header; a response reaching an exporter's <c>_R_.</c> subscription goes back the same way to
/// the requester's reply. Its state is the chain of imports the message being forwarded has crossed (nats-server's
/// <c>c.pa.psi</c>, which stops loops) and the last plain request-info line; made at a client's first forward and
/// touched only by that producer's own thread.
/// </summary>
internal sealed class ServiceImportForwarder(ClientBase producer)
{
    private static readonly byte[] JetStreamAckPrefix = "$JS.ACK."u8.ToArray();

    // The service imports the message being forwarded has crossed.
    private ServiceImport[] chain = new ServiceImport[4];
    private int chainCount;

    // Per depth of the chain (a forward's delivery may forward again while its subject is still in use): the buffer of
    // an import's transformed subject and the scratch of the exporter's mappings, made at first use and reused.
    private byte[][] targets = new byte[4][];
    private MappingScratch?[] mappingScratches = new MappingScratch?[4];

    // The last plain Nats-Request-Info line this producer sent, with the round trip and account it was made for.
    private byte[]? plainRequestInfo;
    private long plainRequestInfoRtt;
    private Account? plainRequestInfoAccount;

    /// <summary>Whether the producer is forwarding across a service import now: shadows of stream imports are skipped.</summary>
    public bool Forwarding => chainCount > 0;

    /// <summary>
    /// Forwards a message routed by <paramref name="subject"/> that matched <paramref name="import"/> in
    /// <paramref name="source"/> (the account the import or route lives in) to its destination. A message delivered as
    /// another subject (JetStream's stored subject, <paramref name="deliverAs"/>) keeps it, as nats-server passes its
    /// deliver subject through.
    /// </summary>
    public void Forward(ServiceImport import, Account source, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        for (var i = chainCount - 1; i >= 0; i--)
        {
            var crossed = chain[i];
            if (ReferenceEquals(crossed, import) || (import.Export is not null && ReferenceEquals(crossed.Export, import.Export)))
            {
                return;
            }
        }

        var isResponse = import.IsResponse;
        var destination = import.Destination;
        var depth = chainCount;
        if (depth == targets.Length)
        {
            Array.Resize(ref targets, depth * 2);
            Array.Resize(ref mappingScratches, depth * 2);
        }

        targets[depth] ??= [];
        var to = isResponse ? import.ToBytes : import.Target(subject, ref targets[depth]);
        if (destination.Mappings is { } mappings)
        {
            to = mappings.Map(to, mappingScratches[depth] ??= new MappingScratch());
        }

        // A reply is replaced by a route back, except JetStream's acks, which pass as they are (pull consumers across accounts).
        ServiceImport? route = null;
        var reply = replyTo;
        var tracking = !isResponse && import.Export?.Latency is { } latency ? Sample(latency, import, replyTo, headers) : null;
        if (!replyTo.IsEmpty && !replyTo.StartsWith(JetStreamAckPrefix))
        {
            route = destination.Responses.Add(producer.Server, source, replyTo, import, tracking);
            reply = route.FromBytes;
        }

        // A sampled request's response is measured as it arrives, before it is delivered (client.go processServiceImport).
        var measured = !isResponse || import.Tracking is not { } responseTracking || responseTracking.Responded(producer);

        var forwarded = headers;
        if (!isResponse && RequestInfoLine(import, source, headers) is { } line)
        {
            forwarded = new ReadOnlySequence<byte>(RequestInfoHeader.Compose(headers, line));
        }

        if (chainCount == chain.Length)
        {
            Array.Resize(ref chain, chain.Length * 2);
        }

        chain[chainCount++] = import;
        int delivered;
        try
        {
            delivered = producer.DeliverToAll(destination.SubList.Match(to), to, deliverAs.SequenceEqual(subject) ? to : deliverAs, reply, forwarded, payload);
        }
        finally
        {
            chain[--chainCount] = null!;
        }

        // A route goes after its one response, after an empty message (the end of a stream), or when nobody took it.
        // A sampled route whose response was not measured stays to its threshold, as nats-server keeps it.
        var remove = measured && (delivered == 0 || (isResponse && (import.ResponseType == ServiceResponseType.Singleton || (headers.IsEmpty && payload.IsEmpty))));
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
                destination.Responses.Remove(route, RouteFailure.NoDelivery);
            }
        }
    }

    // A request through a tracked export (accounts.go shouldSample): its measurement when sampled; a sampled request
    // without a reply reports 400 at once.
    private LatencyTracking? Sample(ServiceLatency latency, ServiceImport import, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers)
    {
        if (!latency.ShouldSample(headers, out var header))
        {
            return null;
        }

        var exporter = import.Export!.Owner;
        if (replyTo.IsEmpty)
        {
            LatencyTracking.BadRequest(latency, exporter, producer, import.Share, header);
            return null;
        }

        return replyTo.StartsWith(JetStreamAckPrefix) ? null : new LatencyTracking(latency, exporter, producer, import.Share, header);
    }

    // The Nats-Request-Info line for a request; the plain one ({"acc","rtt"}) is kept while the round trip stays the same.
    private byte[]? RequestInfoLine(ServiceImport import, Account source, in ReadOnlySequence<byte> headers)
    {
        if (chainCount > 0 || import.Share || import.Destination.IsSystem || producer.IsSystemClient)
        {
            return RequestInfo(import, source, headers)?.Line();
        }

        var rtt = producer.RoundTripNanoseconds;
        var account = producer.Account;
        if (plainRequestInfo is null || plainRequestInfoRtt != rtt || !ReferenceEquals(plainRequestInfoAccount, account))
        {
            plainRequestInfo = new RequestInfoHeader { Account = account.Name, Rtt = rtt }.Line();
            plainRequestInfoRtt = rtt;
            plainRequestInfoAccount = account;
        }

        return plainRequestInfo;
    }

    // The requester's details for the exporter; null for the system account's own client (nats-server's kind SYSTEM
    // has none) and for a request already forwarded whose header is missing.
    private RequestInfoHeader? RequestInfo(ServiceImport import, Account source, in ReadOnlySequence<byte> headers)
    {
        if (producer.IsSystemClient)
        {
            return null;
        }

        var systemImport = import.Destination.IsSystem;
        var serverName = producer.Server.ServerName;
        if (chainCount > 0)
        {
            var share = chain[chainCount - 1].Share;
            var previous = RequestInfoHeader.Read(headers);
            if (previous is null)
            {
                return null;
            }

            previous.Service = source.Name;
            if (!share && (import.Share || systemImport))
            {
                previous.Server ??= serverName;
            }

            return previous;
        }

        var info = RequestInfoHeader.Of(producer, import.Share);
        if (!import.Share && systemImport)
        {
            info.Server = serverName;
        }

        return info;
    }
}
