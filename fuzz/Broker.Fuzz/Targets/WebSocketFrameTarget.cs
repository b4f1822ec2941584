using System.Buffers.Binary;
using System.Text;
using Broker.Adapters.WebSocket.Internal;
using Broker.Fuzz.Support;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Fuzz.Targets;

/// <summary>
/// The WebSocket frame decoder of adapters/websocket (the receive loop of <see cref="WebSocketConnection"/>) over an
/// in-memory transport. The first input byte chooses the session (bit 0: permessage-deflate negotiated); the rest
/// is what the client sends. Invariants: the bytes handed to the protocol and the close frame the server ends with
/// are the same whether the input arrives whole or cut up; without compression they are exactly what an independent
/// RFC 6455 reading (<see cref="WebSocketReference"/>) gives; every pong echoes a ping's payload; after a close or a
/// framing error nothing more is decoded.
/// </summary>
internal sealed class WebSocketFrameTarget : IFuzzTarget
{
    public const long MaxMessageSize = 2048;

    public string Name => "websocket-frames";

    public void Run(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty)
        {
            return;
        }

        var compression = (input[0] & 1) != 0;
        var frames = input[1..].ToArray();
        var whole = Feed(compression, [frames]);
        if (!compression)
        {
            var expected = WebSocketReference.Decode(frames, MaxMessageSize);
            InvariantViolation.Check(whole.Data.AsSpan().SequenceEqual(expected.Data), $"decoded {whole.Data.Length} bytes, the reference {expected.Data.Length}");
            InvariantViolation.Check(whole.CloseStatus == expected.CloseStatus, $"closed with {whole.CloseStatus}, the reference with {expected.CloseStatus}");
            InvariantViolation.Check(whole.Pongs.All(p => expected.Pings.Any(p.SequenceEqual)), "a pong carries no ping's payload");
        }

        foreach (var layout in Splits.Layouts(frames, randomLayouts: 2))
        {
            var split = Feed(compression, layout);
            InvariantViolation.Check(split.Data.AsSpan().SequenceEqual(whole.Data), $"cut-up input decoded to other bytes ({split.Data.Length} vs {whole.Data.Length})");
            InvariantViolation.Check(split.CloseStatus == whole.CloseStatus, $"cut-up input closed with {split.CloseStatus}, whole with {whole.CloseStatus}");
        }
    }

    private static Outcome Feed(bool compression, IReadOnlyList<byte[]> pieces) => FeedAsync(compression, pieces).GetAwaiter().GetResult();

    private static async Task<Outcome> FeedAsync(bool compression, IReadOnlyList<byte[]> pieces)
    {
        var inner = new MemoryTransport();
        var connection = new WebSocketConnection(inner, new WebSocketSession(compression, Browser: false, MaxMessageSize, ForwardedFor: null), NullLogger.Instance);
        connection.Start();
        foreach (var piece in pieces)
        {
            // Inline schedulers: the receive loop decodes this piece before the write returns.
            await inner.PeerInput.WriteAsync(piece).ConfigureAwait(false);
        }

        await inner.PeerInput.CompleteAsync().ConfigureAwait(false);
        var data = await MemoryTransport.ReadToEndAsync(connection.Transport.Input).ConfigureAwait(false);

        // The protocol sees its input end and closes: the send loop ends the session with the close frame.
        await connection.Transport.Output.CompleteAsync().ConfigureAwait(false);
        var sent = await MemoryTransport.ReadToEndAsync(inner.PeerOutput).ConfigureAwait(false);
        await connection.DisposeAsync().ConfigureAwait(false);
        await inner.DisposeAsync().ConfigureAwait(false);
        return Outcome.From(data, sent);
    }

    private sealed record Outcome(byte[] Data, int CloseStatus, List<byte[]> Pongs)
    {
        /// <summary>Reads the server's frames: pongs, then exactly one close frame, last.</summary>
        public static Outcome From(byte[] data, byte[] sent)
        {
            var pongs = new List<byte[]>();
            var position = 0;
            int? status = null;
            while (position < sent.Length)
            {
                InvariantViolation.Check(status is null, "the server sent a frame after its close frame");
                var b0 = sent[position];
                int length = sent[position + 1];
                InvariantViolation.Check((b0 & 0x80) != 0 && length < 126, $"unexpected server frame 0x{b0:x2} length {length}");
                var payload = sent.AsSpan(position + 2, length);
                switch (b0 & 0x0F)
                {
                    case Frames.Pong:
                        pongs.Add(payload.ToArray());
                        break;
                    case Frames.Close:
                        status = payload.Length >= 2 ? BinaryPrimitives.ReadUInt16BigEndian(payload) : Frames.NoStatusReceived;
                        if (payload.Length > 2)
                        {
                            // The reason is valid UTF-8 (a close reason that is not would fail the client).
                            _ = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(payload[2..]);
                        }

                        break;
                    default:
                        throw new InvariantViolation($"unexpected server opcode {b0 & 0x0F}");
                }

                position += 2 + length;
            }

            InvariantViolation.Check(status is not null, "the session ended without a close frame");
            return new Outcome(data, status!.Value, pongs);
        }
    }
}
