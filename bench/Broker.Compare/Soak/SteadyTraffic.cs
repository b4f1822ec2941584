using System.Buffers.Text;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.Compare.Load;
using Broker.Compare.Mqtt;

namespace Broker.Compare.Soak;

/// <summary>
/// The messages that must all arrive: one NATS publisher sends to <see cref="Subjects"/> subjects
/// (<c>soak.steady.S</c>) at a steady rate (<see cref="Publish"/>) or as fast as the slowest subscriber reads
/// (<see cref="PublishAhead"/>), each payload <c>S:SEQ</c>; steady NATS subscribers (<c>soak.steady.*</c>), MQTT
/// subscribers (<c>soak/steady/+</c>, QoS 0) and, when asked, NATS subscribers over WebSocket, never churned, read
/// every message and check the sequence per subject. A gap is a lost message; what never arrived by the end is lost too.
/// The soak and the slow-consumer storm both run it.
/// </summary>
internal sealed class SteadyTraffic : IDisposable
{
    public const int Subjects = 4;

    private readonly NatsSocket publisher;
    private readonly Lock publisherSend = new();
    private readonly List<SequenceCheck> checks = [];
    private readonly List<NatsSocket> natsSubscribers = [];
    private readonly List<MqttWire> mqttSubscribers = [];
    private readonly List<Thread> threads = [];
    private readonly long[] published = new long[Subjects];
    private readonly CancellationTokenSource stopping = new();
    private long pongs;
    private volatile bool closed;
    private string? readerFailure;
    private Thread? publishing;

    private SteadyTraffic(NatsSocket publisher) => this.publisher = publisher;

    /// <summary>Messages published so far, all subjects.</summary>
    public long Published => published.Sum(p => Interlocked.Read(ref p));

    /// <summary>
    /// Connects the publisher and the steady subscribers and starts their readers. With <paramref name="importing"/>
    /// every odd NATS subscriber logs in to the importing account of the two-account soak and subscribes to the
    /// prefixed subjects (<see cref="SoakAccounts"/>): the same messages, through the stream import.
    /// </summary>
    public static SteadyTraffic Start(NatsEndpoint nats, IPEndPoint mqtt, int subscribersPerProtocol, CancellationToken cancellationToken, IPEndPoint? webSocket = null, bool importing = false)
    {
        var traffic = new SteadyTraffic(NatsSocket.Open(nats, "soak-publisher"));
        try
        {
            traffic.Reader("soak-publisher-reader", () => traffic.ReadNats(traffic.publisher, check: null));
            NatsEndpoint[] natsEndpoints = webSocket is null ? [nats] : [nats, new NatsEndpoint(webSocket, NatsTransport.WebSocket)];
            for (var i = 0; i < subscribersPerProtocol * natsEndpoints.Length; i++)
            {
                var imported = importing && i % 2 == 1;
                var socket = NatsSocket.Open(
                    natsEndpoints[i / subscribersPerProtocol],
                    $"soak-steady-{i}",
                    imported ? $"SUB {SoakAccounts.Prefix}soak.steady.* 1\r\n" : "SUB soak.steady.* 1\r\n",
                    user: imported ? SoakAccounts.ImportingUser : null);
                traffic.natsSubscribers.Add(socket);
                var check = new SequenceCheck();
                traffic.checks.Add(check);
                traffic.Reader($"soak-steady-nats-{i}", () => traffic.ReadNats(socket, check));
            }

            for (var i = 0; i < subscribersPerProtocol; i++)
            {
                var wire = MqttWire.ConnectAsync(mqtt, $"soak-steady-{i}", cancellationToken).GetAwaiter().GetResult();
                traffic.mqttSubscribers.Add(wire);
                wire.SubscribeAsync("soak/steady/+", 0, cancellationToken).GetAwaiter().GetResult();
                var check = new SequenceCheck();
                traffic.checks.Add(check);
                traffic.Reader($"soak-steady-mqtt-{i}", () => wire.ReadPublishes(() => traffic.closed, (_, payload) => check.Receive(payload)));
            }

            return traffic;
        }
        catch
        {
            traffic.Dispose();
            throw;
        }
    }

    /// <summary>The first failure of a steady reader, if one failed.</summary>
    public string? ReaderFailure => Volatile.Read(ref readerFailure);

    /// <summary>Messages delivered so far to the steady subscribers, all of them together.</summary>
    public long Delivered => checks.Sum(c => c.Delivered);

    /// <summary>Client connections this traffic holds open.</summary>
    public int Connections => 1 + natsSubscribers.Count + mqttSubscribers.Count;

    /// <summary>Starts publishing <paramref name="perSecond"/> messages a second, round robin over the subjects.</summary>
    public void Publish(int perSecond)
    {
        publishing = new Thread(() =>
        {
            var started = Stopwatch.GetTimestamp();
            long sent = 0;
            var frames = new StringBuilder();
            while (!stopping.IsCancellationRequested)
            {
                var due = (long)(Stopwatch.GetElapsedTime(started).TotalSeconds * perSecond);
                frames.Clear();
                for (; sent < due; sent++)
                {
                    var subject = (int)(sent % Subjects);
                    var payload = $"{subject}:{published[subject]++}";
                    frames.Append("PUB soak.steady.").Append(subject).Append(' ').Append(payload.Length).Append("\r\n").Append(payload).Append("\r\n");
                }

                if (frames.Length > 0)
                {
                    lock (publisherSend)
                    {
                        publisher.Send(Encoding.ASCII.GetBytes(frames.ToString()));
                    }
                }

                stopping.Token.WaitHandle.WaitOne(10);
            }
        }) { IsBackground = true, Name = "soak-publisher" };
        publishing.Start();
    }

    /// <summary>
    /// Starts publishing as fast as the slowest steady subscriber reads: never more than <paramref name="window"/>
    /// messages ahead of it, so the server's throughput is measured without any steady subscriber becoming a slow
    /// consumer. Payloads are padded to <paramref name="payloadSize"/> bytes.
    /// </summary>
    public void PublishAhead(int window, int payloadSize)
    {
        const int Batch = 256;
        ArgumentOutOfRangeException.ThrowIfLessThan(payloadSize, 32);
        publishing = new Thread(() =>
        {
            // One frame made once; per message only the subject digit and the "S:SEQ:" at the payload's start change.
            var template = Encoding.ASCII.GetBytes($"PUB soak.steady.0 {payloadSize}\r\n{new string('x', payloadSize)}\r\n");
            var subjectAt = "PUB soak.steady.".Length;
            var payloadAt = template.AsSpan().IndexOf((byte)'\n') + 1;
            var frames = new byte[Batch * template.Length];
            long sent = 0;
            while (!stopping.IsCancellationRequested)
            {
                var allowed = checks.Min(c => c.Delivered) + window - sent;
                if (allowed <= 0)
                {
                    Thread.Sleep(1);
                    continue;
                }

                var length = 0;
                for (var n = 0; n < Math.Min(allowed, Batch); n++, sent++, length += template.Length)
                {
                    var subject = (int)(sent % Subjects);
                    var frame = frames.AsSpan(length, template.Length);
                    template.CopyTo(frame);
                    frame[subjectAt] = frame[payloadAt] = (byte)('0' + subject);
                    frame[payloadAt + 1] = (byte)':';
                    Utf8Formatter.TryFormat(Interlocked.Increment(ref published[subject]) - 1, frame[(payloadAt + 2)..], out var digits);
                    frame[payloadAt + 2 + digits] = (byte)':';
                }

                lock (publisherSend)
                {
                    publisher.Send(frames.AsSpan(0, length));
                }
            }
        }) { IsBackground = true, Name = "storm-publisher" };
        publishing.Start();
    }

    /// <summary>
    /// Stops publishing, waits until the server confirmed every PUB (PING/PONG) and the subscribers caught up (or
    /// <paramref name="patience"/> passed), and returns what was delivered and lost across all steady subscribers.
    /// </summary>
    public (long Delivered, long Lost, long OutOfOrder) Finish(TimeSpan patience)
    {
        stopping.Cancel();
        publishing?.Join();
        var before = Interlocked.Read(ref pongs);
        lock (publisherSend)
        {
            publisher.Send("PING\r\n"u8);
        }

        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed < patience && (Interlocked.Read(ref pongs) == before || checks.Any(c => !c.CaughtUp(published))))
        {
            Thread.Sleep(20);
        }

        return (checks.Sum(c => c.Delivered), checks.Sum(c => c.Lost(published)), checks.Sum(c => c.OutOfOrder));
    }

    public void Dispose()
    {
        if (closed)
        {
            return;
        }

        closed = true;
        stopping.Cancel();
        publisher.Abort();
        natsSubscribers.ForEach(s => s.Abort());
        foreach (var wire in mqttSubscribers)
        {
            try
            {
                wire.Socket.Send(MqttWire.Disconnect);
            }
            catch (SocketException)
            {
            }

            wire.Dispose();
        }

        threads.ForEach(t => t.Join(TimeSpan.FromSeconds(5)));
        stopping.Dispose();
    }

    /// <summary>PINGREQ to the MQTT subscribers, which never send otherwise (keep-alive 60 s).</summary>
    public void KeepAlive()
    {
        foreach (var wire in mqttSubscribers)
        {
            try
            {
                wire.Socket.Send(MqttWire.PingRequest);
            }
            catch (SocketException)
            {
            }
        }
    }

    private void Reader(string name, Action read)
    {
        var thread = new Thread(() =>
        {
            try
            {
                read();
            }
            catch (Exception ex) when (closed && ex is SocketException or IOException or ObjectDisposedException)
            {
                // Closed at the end of the run.
            }
#pragma warning disable CA1031 // A reader that fails is reported with the run (its messages count as lost).
            catch (Exception ex)
#pragma warning restore CA1031
            {
                Interlocked.CompareExchange(ref readerFailure, $"{name}: {ex.Message}", null);
            }
        }) { IsBackground = true, Name = name };
        threads.Add(thread);
        thread.Start();
    }

    private void ReadNats(NatsSocket socket, SequenceCheck? check)
    {
        var scanner = new MessageScanner();
        var buffer = new byte[64 * 1024];
        var handler = new SteadyHandler(this, socket, check);
        while (!closed)
        {
            int received;
            try
            {
                received = socket.Receive(buffer);
            }
            catch (SocketException ex) when (ex.SocketErrorCode == SocketError.TimedOut)
            {
                // The publisher hears nothing but PINGs and the final PONG; a quiet spell is no failure.
                continue;
            }

            if (received == 0)
            {
                throw new IOException("the server closed a steady connection");
            }

            scanner.Feed(buffer.AsSpan(0, received), ref handler);
        }
    }

    private readonly struct SteadyHandler(SteadyTraffic traffic, NatsSocket socket, SequenceCheck? check) : IScanHandler
    {
        public bool WantsPayload => true;

        public void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload) => check?.Receive(payload);

        public void OnPing()
        {
            lock (traffic.publisherSend)
            {
                socket.SendPong();
            }
        }

        public void OnPong() => Interlocked.Increment(ref traffic.pongs);
    }
}
