using System.Buffers;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// What a consumer listens to on the bus (nats-server <c>setLeader</c>'s <c>ackSub</c>, <c>reqSub</c>, <c>fcSub</c>):
/// its acknowledgements, its pull requests (<c>$JS.API.CONSUMER.MSG.NEXT</c>, subscribed for push consumers too so that
/// they answer 409, as nats-server's do) and, with flow control, the clients' flow-control replies. It reads an
/// acknowledgement's kind (nats-server <c>processAck</c>: the body says ack, <c>-NAK</c>, <c>+WPI</c>, <c>+NXT</c> or
/// <c>+TERM</c>; an ack with a reply subject is confirmed with an empty message) and hands it to the consumer.
/// </summary>
/// <remarks>Subscribed and unsubscribed under the consumer's lock; the handlers run on the client's delivery queue without it.</remarks>
/// <param name="consumer">The consumer the messages go to.</param>
/// <param name="client">The bus client the subscriptions are made on and confirmations sent with.</param>
/// <param name="format">Reads the ack subjects.</param>
internal sealed class ConsumerSubscriptions(Consumer consumer, IBusClient client, DeliveryFormat format)
{
    private readonly List<IBusSubscription> subscriptions = [];

    /// <summary>Subscribes to the consumer's acknowledgements and pull requests, and its flow-control replies when asked.</summary>
    public void Start(string stream, bool flowControl)
    {
        subscriptions.Add(client.Subscribe(format.AckWildcard, null, OnAck));
        subscriptions.Add(client.Subscribe($"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer.Name}", null, OnNextRequest));
        if (flowControl)
        {
            subscriptions.Add(client.Subscribe($"$JS.FC.{stream}.{consumer.Name}.*", null, OnFlowControl));
        }
    }

    /// <summary>Drops the subscriptions.</summary>
    public void Stop()
    {
        foreach (var subscription in subscriptions)
        {
            subscription.Dispose();
        }

        subscriptions.Clear();
    }

    private void OnAck(in BusMessage message)
    {
        if (!format.TryParseAckSubject(message.Subject, out var streamSeq, out var consumerSeq, out var deliveryCount))
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
            client.Publish(message.ReplyTo, default, ReadOnlySequence<byte>.Empty, ReadOnlySequence<byte>.Empty);
        }
    }

    private void OnNextRequest(in BusMessage message)
    {
        if (message.ReplyTo.IsEmpty)
        {
            return;
        }

        var body = message.Payload.IsSingleSegment ? message.Payload.FirstSpan : message.Payload.ToArray();
        consumer.OnNextRequest(message.ReplyTo, body);
    }

    private void OnFlowControl(in BusMessage message) => consumer.OnFlowControl(message.Subject);
}
