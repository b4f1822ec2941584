using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// The bus side of a stream's consumers, one per stream, made with its first consumer: one bus client that every
/// consumer of the stream delivers through, one wildcard subscription for their acknowledgements
/// (<c>$JS.ACK.&lt;stream&gt;.&gt;</c>) and one for their pull requests (<c>$JS.API.CONSUMER.MSG.NEXT.&lt;stream&gt;.*</c>),
/// each routed by the consumer's name token to the consumer the stream holds under that name. A consumer of its own
/// cost a client, its sid table and two subscriptions (about 1.6 KB, the most of an idle MQTT QoS 1 session's consumer).
/// The ack subjects, every ack kind and the pull API are unchanged: a push consumer still answers a pull request with
/// 409 (nats-server subscribes <c>reqSub</c> for both kinds). What names no consumer of the stream gets what nats-server
/// 2.9.10 gives it: an ack with a reply is answered "no responders" (nothing is subscribed to its subject there), a
/// pull request nothing (its subject falls under the account's <c>$JS.API.&gt;</c> import, whose handler ignores it).
/// </summary>
/// <remarks>
/// Reading an acknowledgement's kind (nats-server <c>processAck</c>): the body says ack, <c>-NAK</c>, <c>+WPI</c>,
/// <c>+NXT</c> or <c>+TERM</c>; an ack with a reply subject is confirmed with an empty message. The handlers run on the
/// client's delivery queue, one message at a time for all the stream's consumers, without any consumer's lock.
/// </remarks>
internal sealed class ConsumerInbox : IAsyncDisposable
{
    // Names longer than this are decoded into a rented buffer instead of the stack.
    private const int StackName = 256;

    private readonly ConsumerRegistry consumers;
    private readonly byte[] ackPrefix;
    private readonly byte[] nextPrefix;
    private readonly IBusSubscription ackSubscription;
    private readonly IBusSubscription nextSubscription;

    /// <param name="bus">The bus the client is made on.</param>
    /// <param name="account">The stream's bus account.</param>
    /// <param name="stream">The stream's name.</param>
    /// <param name="consumers">The stream's consumers by name.</param>
    public ConsumerInbox(IMessageBus bus, string? account, string stream, ConsumerRegistry consumers)
    {
        this.consumers = consumers;
        ackPrefix = Encoding.UTF8.GetBytes("$JS.ACK." + stream + ".");
        nextPrefix = Encoding.UTF8.GetBytes("$JS.API.CONSUMER.MSG.NEXT." + stream + ".");
        Client = bus.CreateClient(new BusClientOptions { Name = "JetStream consumers of " + stream, Account = account });
        ackSubscription = Client.Subscribe("$JS.ACK." + stream + ".>", null, OnAck);
        nextSubscription = Client.Subscribe("$JS.API.CONSUMER.MSG.NEXT." + stream + ".*", null, OnNextRequest);
    }

    /// <summary>The client the stream's consumers deliver through and subscribe with (flow control).</summary>
    public IBusClient Client { get; }

    public async ValueTask DisposeAsync()
    {
        ackSubscription.Dispose();
        nextSubscription.Dispose();
        await Client.DisposeAsync().ConfigureAwait(false);
    }

    private void OnAck(in BusMessage message)
    {
        var subject = message.Subject;
        var rest = subject[ackPrefix.Length..];
        var dot = rest.IndexOf((byte)'.');
        var consumer = dot <= 0 ? null : Find(rest[..dot]);
        if (consumer is null)
        {
            AnswerNoResponders(message.ReplyTo);
            return;
        }

        if (!consumer.Format.TryParseAckSubject(subject, out var streamSeq, out var consumerSeq, out var deliveryCount))
        {
            return;
        }

        var body = message.Payload.IsSingleSegment ? message.Payload.FirstSpan : message.Payload.ToArray();
        var confirm = !message.ReplyTo.IsEmpty;
        if (body.IsEmpty || body.SequenceEqual("+ACK"u8) || body.SequenceEqual("+OK"u8))
        {
            consumer.Acknowledge(streamSeq, consumerSeq, sampleDeliveries: deliveryCount);
        }
        else if (body.StartsWith("+NXT"u8))
        {
            consumer.Acknowledge(streamSeq, consumerSeq, sampleDeliveries: deliveryCount);
            if (confirm)
            {
                consumer.OnNextRequest(message.ReplyTo, body[4..]);
            }

            confirm = false;
        }
        else if (body.StartsWith("-NAK"u8))
        {
            consumer.Nak(streamSeq, consumerSeq, deliveryCount, body[4..]);
        }
        else if (body.SequenceEqual("+WPI"u8))
        {
            consumer.Progress(streamSeq);
        }
        else if (body.StartsWith("+TERM"u8))
        {
            consumer.Terminate(streamSeq, consumerSeq, deliveryCount);
        }

        if (confirm)
        {
            Client.Publish(message.ReplyTo, default, ReadOnlySequence<byte>.Empty, ReadOnlySequence<byte>.Empty);
        }
    }

    private void OnNextRequest(in BusMessage message)
    {
        if (message.ReplyTo.IsEmpty)
        {
            return;
        }

        if (Find(message.Subject[nextPrefix.Length..]) is not { } consumer)
        {
            return;
        }

        var body = message.Payload.IsSingleSegment ? message.Payload.FirstSpan : message.Payload.ToArray();
        consumer.OnNextRequest(message.ReplyTo, body);
    }

    private void AnswerNoResponders(ReadOnlySpan<byte> replyTo)
    {
        if (!replyTo.IsEmpty)
        {
            Client.Publish(replyTo, default, SubjectForwarder.NoResponders, ReadOnlySequence<byte>.Empty);
        }
    }

    /// <summary>The consumer named by a subject's token (UTF-8), decoded without allocating for names of usual length.</summary>
    private Consumer? Find(ReadOnlySpan<byte> name)
    {
        if (name.Length <= StackName)
        {
            Span<char> chars = stackalloc char[StackName];
            return consumers.Find(chars[..Encoding.UTF8.GetChars(name, chars)]);
        }

        var rented = ArrayPool<char>.Shared.Rent(name.Length);
        try
        {
            return consumers.Find(rented.AsSpan(0, Encoding.UTF8.GetChars(name, rented)));
        }
        finally
        {
            ArrayPool<char>.Shared.Return(rented);
        }
    }
}
