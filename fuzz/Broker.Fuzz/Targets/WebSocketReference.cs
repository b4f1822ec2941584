using System.Buffers.Binary;
using System.Text;
using Broker.Adapters.WebSocket.Internal;

namespace Broker.Fuzz.Targets;

/// <summary>
/// An independent, deliberately plain reading of a client's uncompressed frame stream (RFC 6455 §5 with nats-server's
/// checks): what a correct server hands to the protocol, the status of the close frame it answers with, and the
/// pings it saw. Data of a frame is handed on as it arrives, so a truncated last frame gives its available bytes.
/// </summary>
internal static class WebSocketReference
{
    public static (byte[] Data, int CloseStatus, List<byte[]> Pings) Decode(ReadOnlySpan<byte> input, long maxMessageSize)
    {
        var data = new List<byte>();
        var pings = new List<byte[]>();
        var messageOpen = false;
        long messageLength = 0;
        var position = 0;
        while (true)
        {
            if (input.Length - position < 2)
            {
                return (data.ToArray(), Frames.NormalClosure, pings);
            }

            var b0 = input[position];
            var b1 = input[position + 1];
            var final = (b0 & 0x80) != 0;
            var opcode = b0 & 0x0F;
            if ((b0 & 0x70) != 0 || (b1 & 0x80) == 0)
            {
                // RSV bits without negotiated compression, or an unmasked client frame.
                return (data.ToArray(), Frames.ProtocolError, pings);
            }

            var control = opcode >= 8;
            long length = b1 & 0x7F;
            var valid = opcode switch
            {
                8 or 9 or 10 => length <= 125 && final,
                1 or 2 => !messageOpen,
                0 => messageOpen,
                _ => false,
            };
            if (!valid)
            {
                return (data.ToArray(), Frames.ProtocolError, pings);
            }

            var header = 2;
            if (length == 126)
            {
                if (input.Length - position < 4)
                {
                    return (data.ToArray(), Frames.NormalClosure, pings);
                }

                length = BinaryPrimitives.ReadUInt16BigEndian(input[(position + 2)..]);
                header = 4;
            }
            else if (length == 127)
            {
                if (input.Length - position < 10)
                {
                    return (data.ToArray(), Frames.NormalClosure, pings);
                }

                var extended = BinaryPrimitives.ReadUInt64BigEndian(input[(position + 2)..]);
                if (extended > long.MaxValue)
                {
                    return (data.ToArray(), Frames.ProtocolError, pings);
                }

                length = (long)extended;
                header = 10;
            }

            var available = input.Length - position - header;
            if (available < 4 || (control && available < 4 + length))
            {
                return (data.ToArray(), Frames.NormalClosure, pings);
            }

            var mask = input.Slice(position + header, 4);
            var payloadStart = position + header + 4;
            if (control)
            {
                var payload = Unmask(input.Slice(payloadStart, (int)length), mask);
                position = payloadStart + (int)length;
                if (opcode == 9)
                {
                    pings.Add(payload);
                }

                if (opcode != 8)
                {
                    continue;
                }

                return (data.ToArray(), CloseReply(payload), pings);
            }

            if (opcode != 0)
            {
                messageLength = 0;
            }

            messageOpen = !final;
            messageLength += length;
            if (messageLength > maxMessageSize)
            {
                return (data.ToArray(), Frames.MessageTooBig, pings);
            }

            var take = (int)Math.Min(length, input.Length - payloadStart);
            data.AddRange(Unmask(input.Slice(payloadStart, take), mask));
            if (take < length)
            {
                return (data.ToArray(), Frames.NormalClosure, pings);
            }

            position = payloadStart + take;
        }
    }

    private static int CloseReply(byte[] payload)
    {
        if (payload.Length == 0)
        {
            return Frames.NoStatusReceived;
        }

        if (payload.Length == 1)
        {
            return Frames.ProtocolError;
        }

        var status = BinaryPrimitives.ReadUInt16BigEndian(payload);
        var valid = status is >= 1000 and < 5000 and not (1004 or 1005 or 1006 or 1015) && status is not (>= 1016 and <= 2999);
        if (!valid)
        {
            return Frames.ProtocolError;
        }

        try
        {
            _ = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(payload, 2, payload.Length - 2);
            return status;
        }
        catch (DecoderFallbackException)
        {
            return Frames.InvalidPayloadData;
        }
    }

    private static byte[] Unmask(ReadOnlySpan<byte> masked, ReadOnlySpan<byte> key)
    {
        var result = masked.ToArray();
        for (var i = 0; i < result.Length; i++)
        {
            result[i] ^= key[i & 3];
        }

        return result;
    }
}
