using System.Buffers;

namespace Broker.Abstractions;

/// <summary>Handles a message delivered to an in-process subscription.</summary>
/// <param name="message">The message; valid only during the call.</param>
public delegate void BusMessageHandler(in BusMessage message);

/// <summary>
/// Receives the messages of in-process subscriptions as <see cref="BusMessageHandler"/> does, as an object's own method
/// (since contract 1.4): a subscriber that is an object already subscribes it without a delegate per subscription
/// (<see cref="IBusClient.Subscribe(string, string?, IBusMessageReceiver)"/>).
/// </summary>
public interface IBusMessageReceiver
{
    /// <summary>Handles a message delivered to the subscription, as <see cref="BusMessageHandler"/> does.</summary>
    /// <param name="message">The message; valid only during the call.</param>
    void Receive(in BusMessage message);
}

/// <summary>
/// A message delivered to an in-process subscription. Its memory belongs to the broker and is valid only during
/// the handler call: a queued copy for <see cref="BusMessageHandler"/>, the publisher's own buffer for
/// <see cref="BusOutputHandler"/>.
/// </summary>
public readonly ref struct BusMessage
{
    /// <summary>Creates a message view.</summary>
    /// <param name="subject">The subject the message was published to.</param>
    /// <param name="replyTo">The reply subject, or empty.</param>
    /// <param name="headers">The NATS header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    public BusMessage(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, ReadOnlySequence<byte> headers, ReadOnlySequence<byte> payload)
    {
        Subject = subject;
        ReplyTo = replyTo;
        Headers = headers;
        Payload = payload;
    }

    /// <summary>The subject the message was published to (UTF-8).</summary>
    public ReadOnlySpan<byte> Subject { get; }

    /// <summary>The reply subject (UTF-8), or empty.</summary>
    public ReadOnlySpan<byte> ReplyTo { get; }

    /// <summary>The NATS header block (<c>NATS/1.0...\r\n\r\n</c>), or empty.</summary>
    public ReadOnlySequence<byte> Headers { get; }

    /// <summary>The payload.</summary>
    public ReadOnlySequence<byte> Payload { get; }
}
