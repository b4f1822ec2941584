using System.Buffers.Text;
using System.Text;

namespace Broker.Compare.Load;

/// <summary>
/// A raw NATS connection used for JetStream: requests to <c>$JS.API</c> on its own inbox, the stream a run needs
/// (created before and deleted after the measured part), and windowed publishing used to fill a stream. Everything is
/// the same bytes whichever server is on the other side.
/// </summary>
internal sealed class JetStreamSession : IDisposable
{
    private readonly NatsSocket socket;
    private readonly string inbox;
    private readonly MessageScanner scanner = new();
    private readonly byte[] buffer = new byte[256 * 1024];
    private int requests;

    /// <param name="server">Where to connect.</param>
    /// <param name="name">The connection's name.</param>
    /// <param name="scope">The run the connection belongs to.</param>
    /// <param name="noResponders">
    /// Ask for a 503 status when no one serves a request (a server still starting its JetStream), instead of silence.
    /// </param>
    public JetStreamSession(NatsEndpoint server, string name, RunScope? scope = null, bool noResponders = false)
    {
        inbox = "_JSBENCH." + Guid.NewGuid().ToString("N");
        socket = NatsSocket.Open(server, name, $"SUB {inbox}.* 1\r\n", scope, noResponders);
    }

    /// <summary>The stream name for a run subject (<c>bench.js-pub.r1</c> becomes <c>BENCH_js_pub_r1</c>).</summary>
    public static string StreamName(string subject) => "BENCH_" + subject.Replace('.', '_').Replace('-', '_');

    /// <summary>Creates a memory stream on <c>&lt;subject&gt;.&gt;</c>, replacing one left by an earlier run.</summary>
    public void CreateStream(string name, string subject, string storage = "memory")
    {
        Request($"$JS.API.STREAM.DELETE.{name}", "");
        var reply = Request($"$JS.API.STREAM.CREATE.{name}", $"{{\"name\":\"{name}\",\"subjects\":[\"{subject}.>\"],\"storage\":\"{storage}\"}}");
        EnsureOk(reply, "stream create");
    }

    public void DeleteStream(string name) => Request($"$JS.API.STREAM.DELETE.{name}", "");

    /// <summary>Creates a consumer (<c>CONSUMER.CREATE.&lt;stream&gt;.&lt;name&gt;</c>) with the given config JSON.</summary>
    public void CreateConsumer(string stream, string name, string configJson)
    {
        var reply = Request($"$JS.API.CONSUMER.CREATE.{stream}.{name}", $"{{\"stream_name\":\"{stream}\",\"config\":{configJson}}}");
        EnsureOk(reply, "consumer create");
    }

    /// <summary>Publishes <paramref name="count"/> messages with at most <paramref name="window"/> unacknowledged, and waits for every ack.</summary>
    public void Fill(string subject, long count, int payloadSize, int window = 1000) => WindowedPublish(socket, subject, inbox, count, payloadSize, window, buffer, scanner);

    /// <summary>
    /// Publishes <paramref name="count"/> messages to a stream subject, each with a reply subject, keeping at most
    /// <paramref name="window"/> without a pub ack; returns when all are acknowledged. Fails on an error ack.
    /// </summary>
    public static void WindowedPublish(NatsSocket socket, string subject, string inboxPrefix, long count, int payloadSize, int window, byte[] buffer, MessageScanner scanner)
    {
        var header = Encoding.ASCII.GetBytes($"PUB {subject}.x {inboxPrefix}.a {payloadSize}\r\n");
        var frame = new byte[header.Length + payloadSize + 2];
        header.CopyTo(frame, 0);
        frame.AsSpan(header.Length, payloadSize).Fill((byte)'j');
        frame[^2] = (byte)'\r';
        frame[^1] = (byte)'\n';

        // Frames go out in batches up to the window; acks are counted as they come back.
        const int FramesPerWrite = 64;
        var batch = new byte[frame.Length * FramesPerWrite];
        for (var i = 0; i < FramesPerWrite; i++)
        {
            frame.CopyTo(batch, i * frame.Length);
        }

        long sent = 0;
        var handler = new AckCounter(socket);
        while (handler.Acked < count)
        {
            var room = Math.Min(count - sent, window - (sent - handler.Acked));
            while (room > 0)
            {
                var frames = (int)Math.Min(room, FramesPerWrite);
                socket.Send(batch.AsSpan(0, frames * frame.Length));
                sent += frames;
                room -= frames;
            }

            var received = socket.Receive(buffer);
            if (received == 0)
            {
                throw new IOException($"The server closed the connection after {handler.Acked:N0} of {count:N0} acks.");
            }

            scanner.Feed(buffer.AsSpan(0, received), ref handler);
        }
    }

    /// <summary>Sends one request and returns the reply payload (headers included) as text.</summary>
    public string Request(string subject, string body)
    {
        var reply = $"{inbox}.{++requests}";
        var payload = Encoding.UTF8.GetBytes(body);
        socket.Send(Encoding.ASCII.GetBytes($"PUB {subject} {reply} {payload.Length}\r\n"));
        socket.Send(payload);
        socket.Send("\r\n"u8);
        var handler = new ReplyCapture(socket);
        while (handler.Reply is null)
        {
            var received = socket.Receive(buffer);
            if (received == 0)
            {
                throw new IOException($"The server closed the connection before answering {subject}.");
            }

            scanner.Feed(buffer.AsSpan(0, received), ref handler);
        }

        return handler.Reply;
    }

    public void Dispose() => socket.Dispose();

    private static void EnsureOk(string reply, string what)
    {
        if (reply.Contains("\"error\"", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"JetStream {what} failed: {reply}");
        }
    }

    private struct ReplyCapture(NatsSocket socket) : IScanHandler
    {
        public string? Reply;

        public readonly bool WantsPayload => true;

        public void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload) => Reply = Encoding.UTF8.GetString(payload);

        public readonly void OnPing() => socket.SendPong();

        public readonly void OnPong()
        {
        }
    }

    /// <summary>Counts pub acks; an ack with an error fails the run.</summary>
    private struct AckCounter(NatsSocket socket) : IScanHandler
    {
        public long Acked;

        public readonly bool WantsPayload => true;

        public void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload)
        {
            if (payload.IndexOf("\"error\""u8) >= 0)
            {
                throw new InvalidOperationException("Publish failed: " + Encoding.UTF8.GetString(payload));
            }

            Acked++;
        }

        public readonly void OnPing() => socket.SendPong();

        public readonly void OnPong()
        {
        }
    }
}

/// <summary>Writes <c>PUB &lt;subject&gt; 0</c> frames (an empty +ACK) for a batch of ack subjects.</summary>
internal sealed class AckWriter
{
    private readonly MemoryStream output = new();

    public void Add(ReadOnlySpan<byte> ackSubject)
    {
        output.Write("PUB "u8);
        output.Write(ackSubject);
        output.Write(" 0\r\n\r\n"u8);
    }

    public void Flush(NatsSocket socket)
    {
        if (output.Length > 0)
        {
            socket.Send(output.GetBuffer().AsSpan(0, (int)output.Length));
            output.SetLength(0);
        }
    }

    public static int FormatInt(Span<byte> destination, long value) => Utf8Formatter.TryFormat(value, destination, out var written) ? written : 0;
}
