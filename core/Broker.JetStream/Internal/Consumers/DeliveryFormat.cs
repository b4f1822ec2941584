using System.Buffers;
using System.Buffers.Text;
using System.Text;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// What a delivery looks like on the wire: its ack reply subject
/// (<c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;dc&gt;.&lt;sseq&gt;.&lt;dseq&gt;.&lt;ts&gt;.&lt;pending&gt;</c>, nats-server
/// <c>ackReply</c>), read back when an acknowledgement arrives (<c>ackReplyInfo</c>), the <c>headers_only</c> body, and
/// the size nats-server charges a delivery. The buffers are the delivery runner's (one at a time); parsing only reads
/// the prefix, so any thread may do it.
/// </summary>
internal sealed class DeliveryFormat(string stream, string consumer, bool headersOnly)
{
    // Made with the first delivery or acknowledgement read (any thread may read acks: two racing make equal arrays and
    // either is kept): a consumer that has delivered nothing (an idle MQTT QoS 1 subscription's) holds none (~80 B).
    private byte[]? ackPrefix;
    // Made with the first delivery: a consumer that has delivered nothing (an idle MQTT QoS 1 subscription's) holds none.
    private byte[]? ackBuffer;
    private ArrayBufferWriter<byte>? headersOnlyBuffer;

    /// <summary>The subject the consumer subscribes to for its acknowledgements.</summary>
    public string AckWildcard => Encoding.UTF8.GetString(AckPrefix) + ">";

    private byte[] AckPrefix => ackPrefix ??= Encoding.UTF8.GetBytes("$JS.ACK." + stream + "." + consumer + ".");

    /// <summary>Whether deliveries carry the headers only (<c>headers_only</c>); follows configuration updates.</summary>
    public bool HeadersOnly { get; set; } = headersOnly;

    /// <summary>Formats the ack reply subject into the runner's buffer; valid until the next call.</summary>
    public ReadOnlySpan<byte> AckSubject(ulong deliveryCount, ulong streamSeq, ulong consumerSeq, long timestamp, ulong numPending)
    {
        var ackPrefix = AckPrefix;
        if (ackBuffer is null || ackBuffer.Length < ackPrefix.Length + 110)
        {
            ackBuffer = new byte[Math.Max(256, ackPrefix.Length + 128)];
        }

        var span = ackBuffer.AsSpan();
        ackPrefix.CopyTo(span);
        var length = ackPrefix.Length;
        length += Number(span[length..], deliveryCount);
        length += Number(span[length..], streamSeq);
        length += Number(span[length..], consumerSeq);
        Utf8Formatter.TryFormat(timestamp, span[length..], out var written);
        length += written;
        span[length++] = (byte)'.';
        Utf8Formatter.TryFormat(numPending, span[length..], out written);
        return ackBuffer.AsSpan(0, length + written);

        static int Number(Span<byte> destination, ulong value)
        {
            Utf8Formatter.TryFormat(value, destination, out var count);
            destination[count] = (byte)'.';
            return count + 1;
        }
    }

    /// <summary>Reads dc, sseq and dseq from an ack subject of this consumer; false for anything else.</summary>
    public bool TryParseAckSubject(ReadOnlySpan<byte> subject, out ulong streamSeq, out ulong consumerSeq, out ulong deliveryCount)
    {
        streamSeq = consumerSeq = deliveryCount = 0;
        var ackPrefix = AckPrefix;
        if (!subject.StartsWith(ackPrefix))
        {
            return false;
        }

        var rest = subject[ackPrefix.Length..];
        Span<ulong> numbers = stackalloc ulong[5];
        for (var i = 0; i < 5; i++)
        {
            var dot = rest.IndexOf((byte)'.');
            var token = dot < 0 ? rest : rest[..dot];
            if ((dot < 0) != (i == 4) || !Utf8Parser.TryParse(token, out numbers[i], out var used) || used != token.Length)
            {
                // The timestamp token may be negative in theory; anything else malformed is not an ack of ours.
                if (i != 3 || !Utf8Parser.TryParse(token, out long _, out used) || used != token.Length)
                {
                    return false;
                }
            }

            rest = dot < 0 ? default : rest[(dot + 1)..];
        }

        deliveryCount = numbers[0];
        streamSeq = numbers[1];
        consumerSeq = numbers[2];
        return true;
    }

    /// <summary>
    /// The size nats-server charges a delivery (its <c>sz</c>): subject, ack reply, headers and payload as sent, so a
    /// client's <c>max_bytes</c> arithmetic (nats.c's fetch tests count it) comes out as against nats-server. The same
    /// size goes to a pull request's <c>max_bytes</c>, the rate limit and flow control.
    /// </summary>
    public int DeliverySize(StoredMessage message, ulong deliveryCount, ulong consumerSeq, ulong numPending)
    {
        var ackLength = AckPrefix.Length + Digits(deliveryCount) + Digits(message.Sequence) + Digits(consumerSeq)
            + Digits((ulong)Math.Max(message.Timestamp, 0)) + Digits(numPending) + 4;
        var body = HeadersOnly
            ? (message.Headers.Length == 0 ? 10 : message.Headers.Length - 2) + 19 + Digits((ulong)message.Payload.Length)
            : message.Headers.Length + message.Payload.Length;
        return message.Subject.Length + ackLength + body;

        static int Digits(ulong value)
        {
            var digits = 1;
            while (value >= 10)
            {
                value /= 10;
                digits++;
            }

            return digits;
        }
    }

    /// <summary>The headers a delivery carries: the message's, or with <c>headers_only</c> those plus <c>Nats-Msg-Size</c>.</summary>
    public ReadOnlySequence<byte> Headers(StoredMessage message) =>
        HeadersOnly ? HeadersOnlyBlock(message) : new ReadOnlySequence<byte>(message.Headers);

    /// <summary>The payload a delivery carries: none with <c>headers_only</c>.</summary>
    public ReadOnlySequence<byte> Payload(StoredMessage message) =>
        HeadersOnly ? ReadOnlySequence<byte>.Empty : new ReadOnlySequence<byte>(message.Payload);

    private ReadOnlySequence<byte> HeadersOnlyBlock(StoredMessage message)
    {
        var writer = headersOnlyBuffer ??= new ArrayBufferWriter<byte>(256);
        writer.ResetWrittenCount();
        var existing = message.Headers.Span;
        writer.Write(existing.IsEmpty ? "NATS/1.0\r\n"u8 : existing[..^2]);
        writer.Write("Nats-Msg-Size: "u8);
        Span<byte> number = stackalloc byte[20];
        Utf8Formatter.TryFormat(message.Payload.Length, number, out var written);
        writer.Write(number[..written]);
        writer.Write("\r\n\r\n"u8);
        return new ReadOnlySequence<byte>(writer.WrittenMemory);
    }
}
