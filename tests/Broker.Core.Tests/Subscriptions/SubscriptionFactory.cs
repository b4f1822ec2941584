using System.Buffers;
using System.Text;
using Broker.Core.Internal;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Core.Tests.Subscriptions;

/// <summary>Subscriptions for subject index tests, owned by a client that drops every delivery.</summary>
internal static class SubscriptionFactory
{
    private static readonly BrokerCore Server = new(new BrokerOptions(), NullLoggerFactory.Instance);
    private static readonly NullClient Client = new(Server);
    private static int nextSid;

    public static Subscription Plain(string subject) => Create(subject, null);

    public static Subscription Queue(string subject, string queue) => Create(subject, queue);

    public static byte[] Bytes(string text) => Encoding.UTF8.GetBytes(text);

    private static Subscription Create(string subject, string? queue) =>
        new(Client, Bytes(subject), queue is null ? null : Bytes(queue), Bytes(Interlocked.Increment(ref nextSid).ToString()));

    private sealed class NullClient(BrokerCore server) : ClientBase(server, ClientKind.Internal)
    {
        public override bool IsClosed => false;

        public override void Deliver(
            ClientBase producer,
            Subscription subscription,
            ReadOnlySpan<byte> subject,
            ReadOnlySpan<byte> replyTo,
            in ReadOnlySequence<byte> headers,
            in ReadOnlySequence<byte> payload)
        {
        }
    }
}
