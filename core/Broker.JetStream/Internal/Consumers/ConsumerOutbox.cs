using System.Buffers;
using System.Globalization;
using System.Text;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>A control message: status headers (and maybe a reply) to a subject, or an advisory's JSON.</summary>
internal readonly record struct ControlMessage(byte[] Subject, byte[]? Reply, byte[] Headers, byte[]? Payload = null);

/// <summary>
/// The control messages a consumer owes (status replies to pull requests, idle heartbeats, flow-control requests,
/// advisories and ack metrics), in the order they were decided. The delivery runner sends them before any message
/// (<see cref="DeliveryRunner"/>), so they keep their order with deliveries and no bus call is made under the lock.
/// Guarded by the consumer's lock.
/// </summary>
internal sealed class ConsumerOutbox
{
    // Made with the first control message: a consumer that owed none (an idle MQTT QoS 1 subscription's) holds no queue.
    private Queue<ControlMessage>? messages;

    public void Enqueue(ControlMessage message) => (messages ??= new()).Enqueue(message);

    public bool TryDequeue(out ControlMessage message)
    {
        if (messages is null)
        {
            message = default;
            return false;
        }

        return messages.TryDequeue(out message);
    }

    /// <summary>Takes the next control message into <paramref name="send"/>; false when none is queued.</summary>
    public bool TryTake(ref DeliverySend send)
    {
        if (messages is null || !messages.TryDequeue(out var control))
        {
            return false;
        }

        send.Subject = control.Subject;
        send.Reply = control.Reply;
        send.Headers = new ReadOnlySequence<byte>(control.Headers);
        send.Payload = control.Payload is null ? ReadOnlySequence<byte>.Empty : new ReadOnlySequence<byte>(control.Payload);
        return true;
    }

    /// <summary>Queues a header-only status (<paramref name="headers"/> is a whole header block) to <paramref name="subject"/>.</summary>
    public void Status(byte[] subject, ReadOnlySpan<byte> headers, byte[]? reply = null) =>
        Enqueue(new ControlMessage(subject, reply, headers.ToArray()));

    /// <summary>Queues <c>NATS/1.0 &lt;code&gt; &lt;description&gt;</c> to <paramref name="subject"/>.</summary>
    public void Status(byte[] subject, int code, string description) =>
        Enqueue(new ControlMessage(subject, null, Encoding.UTF8.GetBytes($"NATS/1.0 {code.ToString(CultureInfo.InvariantCulture)} {description}\r\n\r\n")));

    /// <summary>
    /// <c>100 Idle Heartbeat</c> with the last consumer and stream sequences delivered, and the id of a flow-control
    /// request the client has not answered (<c>Nats-Consumer-Stalled</c>) when there is one.
    /// </summary>
    public static byte[] IdleHeartbeat(SequencePair lastDelivered, string? stalled)
    {
        var text = new StringBuilder("NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: ")
            .Append(lastDelivered.Consumer).Append("\r\nNats-Last-Stream: ").Append(lastDelivered.Stream).Append("\r\n");
        if (stalled is not null)
        {
            text.Append("Nats-Consumer-Stalled: ").Append(stalled).Append("\r\n");
        }

        return Encoding.ASCII.GetBytes(text.Append("\r\n").ToString());
    }
}
