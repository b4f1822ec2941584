using System.Buffers;
using System.IO.Pipelines;
using System.Net.WebSockets;
using System.Runtime.CompilerServices;
using System.Text;
using BenchmarkDotNet.Attributes;
using Broker.Adapters.WebSocket.Internal;
using Broker.Benchmarks.Embedded;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Benchmarks.Libraries;

/// <summary>
/// The WebSocket framing decision (issue 19): the adapter's own RFC 6455 framing against the BCL's
/// <c>ManagedWebSocket</c> (<c>WebSocket.CreateFromStream</c>, server side), with and without permessage-deflate
/// (no context takeover either way, as nats-server negotiates it). Same work on both sides, one operation = one batch:
/// <list type="bullet">
/// <item><c>Send*</c>: a batch of NATS <c>MSG</c> lines the protocol wrote (16 × 128-byte payloads, or about 64 KiB
/// of them) framed as one binary message into the transport's output pipe, flushed and drained. Ours runs the send
/// loop's own <c>WriteDataFrames</c>; the BCL's runs <c>SendAsync</c> over <see cref="PipeDuplexStream"/>.</item>
/// <item><c>Receive*</c>: masked client frames of <c>PUB</c> lines (16 messages of one PUB each, or one message of
/// about 64 KiB) written into the transport's input pipe; measured until the unmasked (inflated) bytes the NATS parser
/// would read are in the protocol's input pipe. Ours is the real receive loop of a started connection; the BCL's is
/// the loop a move would need (<c>ReceiveAsync</c> into the input pipe's memory, then a flush).</item>
/// <item><c>OwnDeliver*</c>: the whole send path of a started connection, as the broker drives it: the batch written to
/// the connection's output and flushed, which runs the send loop on the flushing thread (issue 24), framing into the
/// transport below; measured until the frames are in that transport's output. No BCL twin: it is our path only.</item>
/// </list>
/// Every pipe runs its continuations inline, so both sides do all their work on the benchmark thread. The client
/// frames are made by a BCL client socket; the setup checks that each side decodes what the other encodes.
/// </summary>
[MemoryDiagnoser]
public class WebSocketFramingBenchmarks
{
    private const int PayloadSize = 128;
    private const int SmallBatch = 16;
    private const int LargeBatchBytes = 64 * 1024;
    private const string Subject = "bench.ws.subject";

    private readonly Pipe wire = NewInlinePipe();
    private byte[] msgBatch16 = null!;
    private byte[] msgBatch64K = null!;
    private ReadOnlySequence<byte> msgSequence16;
    private ReadOnlySequence<byte> msgSequence64K;
    private byte[] pubBytes16 = null!;
    private byte[] pubBytes64K = null!;
    private byte[] clientFrames16 = null!;
    private byte[] clientFrames64K = null!;

    private WebSocketConnection ownSender = null!;
    private InMemoryConnection ownInner = null!;
    private WebSocketConnection ownReceiver = null!;
    private InMemoryConnection ownDelivererInner = null!;
    private WebSocketConnection ownDeliverer = null!;

    private WebSocket bclSender = null!;
    private Pipe bclFromClient = null!;
    private Pipe bclProtocolInput = null!;
    private WebSocket bclReceiver = null!;
    private Task bclReceiveLoop = Task.CompletedTask;

    /// <summary>Whether permessage-deflate was negotiated (server and client no context takeover).</summary>
    [Params(false, true)]
    public bool Deflate { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        // Every line has a payload of its own: deflate gains on the protocol text and the payloads' alphabet, not on
        // repeats of one message (which would shrink a 64 KiB batch to under 1 KiB).
        var random = new Random(42);
        msgBatch16 = Lines("MSG " + Subject + " 1 ", SmallBatch, random);
        msgBatch64K = Lines("MSG " + Subject + " 1 ", LargeBatchBytes / (msgBatch16.Length / SmallBatch), random);
        msgSequence16 = new ReadOnlySequence<byte>(msgBatch16);
        msgSequence64K = new ReadOnlySequence<byte>(msgBatch64K);
        var pubs = Enumerable.Range(0, SmallBatch).Select(_ => Lines("PUB " + Subject + " ", 1, random)).ToList();
        pubBytes16 = [.. pubs.SelectMany(b => b)];
        pubBytes64K = Lines("PUB " + Subject + " ", LargeBatchBytes / pubs[0].Length, random);
        clientFrames16 = ClientFrames(pubs, Deflate);
        clientFrames64K = ClientFrames([pubBytes64K], Deflate);

        var session = new WebSocketSession(Deflate, Browser: false, MaxMessageSize: 8L * 1024 * 1024, ForwardedFor: null);
        ownSender = new WebSocketConnection(new InMemoryConnection(), session, NullLogger.Instance);
        ownInner = new InMemoryConnection();
        ownReceiver = new WebSocketConnection(ownInner, session, NullLogger.Instance);
        ownReceiver.Start();
        ownDelivererInner = new InMemoryConnection();
        ownDeliverer = new WebSocketConnection(ownDelivererInner, session, NullLogger.Instance);
        ownDeliverer.Start();

        bclSender = WebSocket.CreateFromStream(new PipeDuplexStream(NewInlinePipe().Reader, wire.Writer), ServerOptions(Deflate));
        bclFromClient = NewInlinePipe();
        bclProtocolInput = NewInlinePipe();
        bclReceiver = WebSocket.CreateFromStream(new PipeDuplexStream(bclFromClient.Reader, NewInlinePipe().Writer), ServerOptions(Deflate));
        bclReceiveLoop = BclReceiveLoopAsync();

        Check();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        // The peer's end of input ends the receive loop (a socket's close does in production).
        ownInner.PeerInput.Complete();
        ownReceiver.DisposeAsync().AsTask().Wait(TimeSpan.FromSeconds(5));
        ownDelivererInner.PeerInput.Complete();
        ownDeliverer.DisposeAsync().AsTask().Wait(TimeSpan.FromSeconds(5));
        ownSender.DisposeAsync().AsTask().Wait(TimeSpan.FromSeconds(5));
        bclFromClient.Writer.Complete();
        bclReceiver.Abort();
        bclSender.Abort();
        bclReceiveLoop.Wait(TimeSpan.FromSeconds(5));
    }

    [Benchmark]
    public long OwnSend16x128() => OwnSend(msgSequence16);

    [Benchmark]
    public long BclSend16x128() => BclSend(msgBatch16);

    [Benchmark]
    public long OwnSend64K() => OwnSend(msgSequence64K);

    [Benchmark]
    public long BclSend64K() => BclSend(msgBatch64K);

    [Benchmark]
    public long OwnDeliver16x128() => OwnDeliver(msgBatch16);

    [Benchmark]
    public long OwnDeliver64K() => OwnDeliver(msgBatch64K);

    [Benchmark]
    public long OwnReceive16x128() => OwnReceive(clientFrames16, pubBytes16.Length);

    [Benchmark]
    public long BclReceive16x128() => BclReceive(clientFrames16, pubBytes16.Length);

    [Benchmark]
    public long OwnReceive64K() => OwnReceive(clientFrames64K, pubBytes64K.Length);

    [Benchmark]
    public long BclReceive64K() => BclReceive(clientFrames64K, pubBytes64K.Length);

    // The send loop's framing step (private to the connection; no product code changed for the benchmark).
    [UnsafeAccessor(UnsafeAccessorKind.Method, Name = "WriteDataFrames")]
    private static extern void WriteDataFrames(WebSocketConnection connection, PipeWriter writer, ReadOnlySequence<byte> buffer);

    private long OwnSend(ReadOnlySequence<byte> batch)
    {
        WriteDataFrames(ownSender, wire.Writer, batch);
        Complete(wire.Writer.FlushAsync());
        return Drain(wire.Reader, null);
    }

    private long OwnDeliver(byte[] batch)
    {
        var output = ownDeliverer.Transport.Output;
        output.Write(batch);
        Complete(output.FlushAsync());
        return Drain(ownDelivererInner.PeerOutput, null);
    }

    private long BclSend(byte[] batch)
    {
        var send = bclSender.SendAsync(batch, WebSocketMessageType.Binary, WebSocketMessageFlags.EndOfMessage, CancellationToken.None);
        if (!send.IsCompletedSuccessfully)
        {
            send.AsTask().GetAwaiter().GetResult();
        }

        Complete(wire.Writer.FlushAsync());
        return Drain(wire.Reader, null);
    }

    private long OwnReceive(byte[] frames, long expected)
    {
        ownInner.PeerInput.Write(frames);
        Complete(ownInner.PeerInput.FlushAsync());
        return DrainExactly(ownReceiver.Transport.Input, expected, null);
    }

    private long BclReceive(byte[] frames, long expected)
    {
        bclFromClient.Writer.Write(frames);
        Complete(bclFromClient.Writer.FlushAsync());
        return DrainExactly(bclProtocolInput.Reader, expected, null);
    }

    // What a move to the BCL would run per connection in place of WebSocketConnection.ReceiveAsync.
    private async Task BclReceiveLoopAsync()
    {
        var writer = bclProtocolInput.Writer;
        try
        {
            while (true)
            {
                var result = await bclReceiver.ReceiveAsync(writer.GetMemory(1), CancellationToken.None).ConfigureAwait(false);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    break;
                }

                writer.Advance(result.Count);
                await writer.FlushAsync().ConfigureAwait(false);
            }
        }
        catch (Exception ex) when (ex is WebSocketException or OperationCanceledException or ObjectDisposedException or InvalidOperationException)
        {
            // Cleanup aborts the socket.
        }
    }

    /// <summary>Each side's output decodes to the input on the other side, once, before anything is measured.</summary>
    private void Check()
    {
        foreach (var (batch, sequence) in new[] { (msgBatch16, msgSequence16), (msgBatch64K, msgSequence64K) })
        {
            var own = new MemoryStream();
            WriteDataFrames(ownSender, wire.Writer, sequence);
            Complete(wire.Writer.FlushAsync());
            Drain(wire.Reader, own);
            var bcl = new MemoryStream();
            var send = bclSender.SendAsync(batch, WebSocketMessageType.Binary, WebSocketMessageFlags.EndOfMessage, CancellationToken.None);
            send.AsTask().GetAwaiter().GetResult();
            Complete(wire.Writer.FlushAsync());
            Drain(wire.Reader, bcl);
            Expect(DecodeAsClient(own.ToArray(), batch.Length, Deflate), batch, "own send");
            Expect(DecodeAsClient(bcl.ToArray(), batch.Length, Deflate), batch, "BCL send");
            var delivered = new MemoryStream();
            var output = ownDeliverer.Transport.Output;
            output.Write(batch);
            Complete(output.FlushAsync());
            Drain(ownDelivererInner.PeerOutput, delivered);
            Expect(DecodeAsClient(delivered.ToArray(), batch.Length, Deflate), batch, "own deliver");
            Console.WriteLine($"// {batch.Length} B of MSG lines, deflate {Deflate}: own frame {own.Length} B, BCL frame {bcl.Length} B");
        }

        foreach (var (frames, expected) in new[] { (clientFrames16, pubBytes16), (clientFrames64K, pubBytes64K) })
        {
            var own = new MemoryStream();
            ownInner.PeerInput.Write(frames);
            Complete(ownInner.PeerInput.FlushAsync());
            DrainExactly(ownReceiver.Transport.Input, expected.Length, own);
            Expect(own.ToArray(), expected, "own receive");
            var bcl = new MemoryStream();
            bclFromClient.Writer.Write(frames);
            Complete(bclFromClient.Writer.FlushAsync());
            DrainExactly(bclProtocolInput.Reader, expected.Length, bcl);
            Expect(bcl.ToArray(), expected, "BCL receive");
            Console.WriteLine($"// {expected.Length} B of PUB lines, deflate {Deflate}: {frames.Length} B of client frames");
        }
    }

    private static void Expect(byte[] actual, byte[] expected, string what)
    {
        if (!actual.AsSpan().SequenceEqual(expected))
        {
            throw new InvalidOperationException($"{what}: {actual.Length} B decoded, {expected.Length} B expected, contents differ");
        }
    }

    private static WebSocketCreationOptions ServerOptions(bool deflate) => new()
    {
        IsServer = true,
        KeepAliveInterval = TimeSpan.Zero,
        DangerousDeflateOptions = deflate ? new WebSocketDeflateOptions { ClientContextTakeover = false, ServerContextTakeover = false } : null,
    };

    /// <summary>The frames a client (nats.ws, a browser) sends: one masked binary message per buffer.</summary>
    private static byte[] ClientFrames(IEnumerable<byte[]> messages, bool deflate)
    {
        var output = NewInlinePipe();
        using var client = WebSocket.CreateFromStream(new PipeDuplexStream(NewInlinePipe().Reader, output.Writer), new WebSocketCreationOptions
        {
            IsServer = false,
            KeepAliveInterval = TimeSpan.Zero,
            DangerousDeflateOptions = deflate ? new WebSocketDeflateOptions { ClientContextTakeover = false, ServerContextTakeover = false } : null,
        });
        foreach (var message in messages)
        {
            client.SendAsync(message, WebSocketMessageType.Binary, WebSocketMessageFlags.EndOfMessage, CancellationToken.None).AsTask().GetAwaiter().GetResult();
        }

        Complete(output.Writer.FlushAsync());
        var bytes = new MemoryStream();
        Drain(output.Reader, bytes);
        return bytes.ToArray();
    }

    private static byte[] DecodeAsClient(byte[] frames, int expected, bool deflate)
    {
        var input = NewInlinePipe();
        input.Writer.Write(frames);
        Complete(input.Writer.FlushAsync());
        using var client = WebSocket.CreateFromStream(new PipeDuplexStream(input.Reader, NewInlinePipe().Writer), new WebSocketCreationOptions
        {
            IsServer = false,
            KeepAliveInterval = TimeSpan.Zero,
            DangerousDeflateOptions = deflate ? new WebSocketDeflateOptions { ClientContextTakeover = false, ServerContextTakeover = false } : null,
        });
        var decoded = new byte[expected];
        var total = 0;
        while (total < expected)
        {
            var result = client.ReceiveAsync(decoded.AsMemory(total), CancellationToken.None).AsTask().GetAwaiter().GetResult();
            total += result.Count;
        }

        return decoded;
    }

    private static long Drain(PipeReader reader, Stream? copy)
    {
        long total = 0;
        while (reader.TryRead(out var result))
        {
            total += result.Buffer.Length;
            if (copy is not null)
            {
                foreach (var segment in result.Buffer)
                {
                    copy.Write(segment.Span);
                }
            }

            reader.AdvanceTo(result.Buffer.End);
        }

        return total;
    }

    private static long DrainExactly(PipeReader reader, long expected, Stream? copy)
    {
        long total = 0;
        var spin = default(SpinWait);
        while (total < expected)
        {
            if (!reader.TryRead(out var result))
            {
                // Never taken when every continuation runs inline; kept so a change of scheduling cannot hang the run.
                spin.SpinOnce();
                continue;
            }

            total += result.Buffer.Length;
            if (copy is not null)
            {
                foreach (var segment in result.Buffer)
                {
                    copy.Write(segment.Span);
                }
            }

            reader.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted && total < expected)
            {
                throw new InvalidOperationException($"input ended after {total} of {expected} bytes");
            }
        }

        return total;
    }

    private static void Complete(ValueTask<FlushResult> flush)
    {
        if (!flush.IsCompletedSuccessfully)
        {
            flush.AsTask().GetAwaiter().GetResult();
        }
    }

    private static Pipe NewInlinePipe() => new(new PipeOptions(
        readerScheduler: PipeScheduler.Inline,
        writerScheduler: PipeScheduler.Inline,
        pauseWriterThreshold: 0,
        useSynchronizationContext: false));

    /// <summary>
    /// <paramref name="count"/> protocol lines <c>prefix 128\r\npayload\r\n</c>, each payload new printable bytes
    /// (letters and digits from a seeded generator): deflate gains about what it gains on text.
    /// </summary>
    private static byte[] Lines(string prefix, int count, Random random)
    {
        const string alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
        var head = Encoding.ASCII.GetBytes(prefix + PayloadSize + "\r\n");
        var lines = new List<byte>();
        for (var line = 0; line < count; line++)
        {
            lines.AddRange(head);
            for (var i = 0; i < PayloadSize; i++)
            {
                lines.Add((byte)alphabet[random.Next(alphabet.Length)]);
            }

            lines.AddRange("\r\n"u8.ToArray());
        }

        return [.. lines];
    }
}
