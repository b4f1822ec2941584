using System.Buffers;
using Broker.Core.Internal;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Benchmarks.Embedded;

/// <summary>
/// A producer that enters the broker's routing path (<see cref="ClientBase"/>.RouteMessage: match, fan-out,
/// deferred flush) exactly where a NATS connection's PUB handler does, but on the benchmark thread and with the
/// batch boundary under the benchmark's control. It also owns the subscriptions of SubList-only benchmarks.
/// </summary>
internal sealed class BenchPublisher(BrokerCore server, Core.Internal.Accounts.Account? account = null) : ClientBase(server, ClientKind.Client, account)
{
    public override bool IsClosed => false;

    /// <summary>
    /// Routes one message, as a parsed PUB/HPUB would be routed (after the account's subject mappings, as a NATS
    /// connection maps it); call <see cref="ClientBase.FlushPending"/> after a batch.
    /// </summary>
    public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        if (Account.Mappings is { } mappings)
        {
            subject = MapSubject(mappings, subject);
        }

        RouteMessage(subject, replyTo, headers, payload);
    }

    // The publisher never subscribes, so nothing is delivered to it.
    public override void Deliver(ClientBase producer, Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
    }
}
