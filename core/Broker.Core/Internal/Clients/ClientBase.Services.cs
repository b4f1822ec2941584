using System.Buffers;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Service imports on the publishing side: a publish that reached an account's import client is forwarded by its
/// producer across the import, or back along a response route, by the producer's <see cref="ServiceImportForwarder"/>.
/// </summary>
internal abstract partial class ClientBase
{
    // Made at this producer's first forward across a service import; only the producer's own thread touches it.
    private ServiceImportForwarder? serviceForwarder;

    /// <summary>Whether this producer is forwarding across a service import now: shadows of stream imports are skipped.</summary>
    internal bool Forwarding => serviceForwarder is { Forwarding: true };

    /// <summary>
    /// Forwards a message that matched a subscription of an account's import client: across its service import, or,
    /// for the subscription on the account's response prefix, back along the route of the reply it was published to.
    /// The delivery was counted by the caller and is taken back (nats-server counts none to internal subscriptions;
    /// the forwarded deliveries are counted as they are made).
    /// </summary>
    internal void ForwardToImportClient(Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        batchOutMessages--;
        batchOutBytes -= headers.Length + payload.Length;
        var account = subscription.Client.Account;
        if (subscription.ServiceImport is { } import)
        {
            (serviceForwarder ??= new ServiceImportForwarder(this)).Forward(import, account, subject, deliverAs, replyTo, headers, payload);
        }
        else if (account.Responses.Find(subject) is { } route)
        {
            (serviceForwarder ??= new ServiceImportForwarder(this)).Forward(route, account, subject, deliverAs, replyTo, headers, payload);
        }
    }

    /// <summary>The measured round-trip time in nanoseconds, 0 until measured (nats-server's <c>c.rtt</c>).</summary>
    protected internal virtual long RoundTripNanoseconds => 0;

    /// <summary>Adds the details a <c>share</c> import passes on (nats-server's detailed <c>getClientInfo</c>).</summary>
    protected internal virtual void DescribeForRequestInfo(RequestInfoHeader info)
    {
        info.Start = RequestInfoHeader.FormatStart(StartedAt);
        info.Id = Id;
        info.User = AuthorizedUser;
        info.Name = Name;
        info.Kind = "Client";
        info.ClientType = "nats";
    }
}
