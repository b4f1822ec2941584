using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.Compare.Servers;

namespace Broker.Compare.Mqtt;

/// <summary>
/// <c>--mqtt</c>: the MQTT rows of issue 12, side by side in one run against nats-server (MQTT on JetStream) and
/// Mosquitto: QoS 0, 1 and 2 pub/sub 1:1 with 128-byte payloads, in MQTT 3.1.1 and (ours and Mosquitto only) in
/// MQTT 5 (QoS 2 ours and Mosquitto only: nats-server 2.9.10 has none), a NATS publisher to an MQTT subscriber, and 10,000
/// connected MQTT sessions with one subscription each (connect time and resident memory per session). Each throughput
/// row runs <c>runs</c> times per server, the servers alternating run by run; the median is reported.
/// </summary>
internal static class MqttCompare
{
    private const int Payload = 128;
    private const int Window = 4096;

    // QoS 1 and 2: Mosquitto keeps 20 messages in flight and queues 1000 per client, dropping the rest; stay below that.
    private const int Qos1Window = 512;

    // QoS 2: Mosquitto takes 20 incoming QoS 2 publishes awaiting PUBREL (max_inflight_messages) and closes a 3.1.1
    // client that sends more; the window stays at that, for every server.
    private const int Qos2Window = 20;
    private const int Batch = 64;

    /// <param name="rows">Runs only the rows whose name contains it (<see langword="null"/>: all).</param>
    /// <param name="hostDll">Broker.Host.dll to start (<see langword="null"/>: this configuration's build output).</param>
    public static int Run(TextWriter log, int runs, bool smoke, int sessions, CancellationToken cancellationToken, string? rows = null, string? hostDll = null)
    {
        rowFilter = rows;
        hostDll = OurBroker.LocateHost(hostDll, log);
        var natsServer = NatsServerBinary.Locate(null, log);
        var mosquitto = File.Exists("/usr/sbin/mosquitto") ? "/usr/sbin/mosquitto" : "mosquitto";
        var qos0Count = smoke ? 2_000 : 400_000;
        var qos1Count = smoke ? 2_000 : 150_000;
        var qos2Count = smoke ? 2_000 : 100_000;
        var results = new List<(string Row, string Server, double Value)>();
        using (var ours = MqttServer.StartOurs(hostDll))
        using (var nats = MqttServer.StartNatsServer(natsServer))
        using (var mosq = MqttServer.StartMosquitto(mosquitto))
        {
            MqttServer[] all = [nats, ours, mosq];
            for (var run = 0; run < runs; run++)
            {
                foreach (var server in run % 2 == 0 ? all : all.Reverse())
                {
                    Measure(log, results, "MQTT QoS 0 pub/sub 1:1, 128 B (msgs/s)", server, () => PubSub(server, 0, qos0Count, run, cancellationToken));
                    Measure(log, results, "MQTT QoS 1 pub/sub 1:1, 128 B (msgs/s)", server, () => PubSub(server, 1, qos1Count, run, cancellationToken));
                    if (server.Name != "nats-server")
                    {
                        // nats-server 2.9.10 has no QoS 2 (it refuses a QoS 2 PUBLISH and grants QoS 1 for a QoS 2
                        // SUBSCRIBE) and no MQTT 5 (it refuses the CONNECT): these rows compare with Mosquitto.
                        Measure(log, results, "MQTT QoS 2 pub/sub 1:1, 128 B (msgs/s)", server, () => PubSub(server, 2, qos2Count, run, cancellationToken));
                        Measure(log, results, "MQTT 5 QoS 0 pub/sub 1:1, 128 B (msgs/s)", server, () => PubSub(server, 0, qos0Count, run, cancellationToken, level: 5));
                        Measure(log, results, "MQTT 5 QoS 1 pub/sub 1:1, 128 B (msgs/s)", server, () => PubSub(server, 1, qos1Count, run, cancellationToken, level: 5));
                        Measure(log, results, "MQTT 5 QoS 2 pub/sub 1:1, 128 B (msgs/s)", server, () => PubSub(server, 2, qos2Count, run, cancellationToken, level: 5));
                    }

                    if (server.Nats is not null)
                    {
                        Measure(log, results, "NATS to MQTT, 128 B (msgs/s)", server, () => NatsToMqtt(server, qos0Count, run, cancellationToken));
                    }

                    log.WriteLine($"run {run + 1}/{runs} {server.Name}: done");
                }
            }
        }

        foreach (var start in Selected("MQTT sessions") ? new Func<MqttServer>[] { () => MqttServer.StartNatsServer(natsServer), () => MqttServer.StartOurs(hostDll), () => MqttServer.StartMosquitto(mosquitto) } : [])
        {
            foreach (var qos in new byte[] { 0, 1 })
            {
                // A fresh process per QoS: what the first batch left behind must not count in the second.
                using var server = start();
                var count = smoke ? 200 : sessions;
                var (perSession, early, seconds, left) = Sessions(server, count, qos, smoke, cancellationToken);
                results.Add(($"{count:N0} MQTT sessions, 1 sub QoS {qos}: memory per session (KB)", server.Name, perSession / 1024));
                results.Add(($"{count:N0} MQTT sessions, 1 sub QoS {qos}: memory per session 2 s after the connects (KB)", server.Name, early / 1024));
                results.Add(($"{count:N0} MQTT sessions, 1 sub QoS {qos}: connect + subscribe time (s)", server.Name, seconds));
                results.Add(($"{count:N0} MQTT sessions, 1 sub QoS {qos}: left above the baseline after they went (%)", server.Name, left * 100));
                log.WriteLine($"sessions QoS {qos} {server.Name}: done");
            }
        }

        log.WriteLine();
        log.WriteLine("| Row | nats-server | ours | Mosquitto | ours / nats-server | ours / Mosquitto |");
        log.WriteLine("|---|---:|---:|---:|---:|---:|");
        foreach (var row in results.GroupBy(r => r.Row))
        {
            double? Median(string server)
            {
                var values = row.Where(r => r.Server == server).Select(r => r.Value).Order().ToArray();
                return values.Length == 0 ? null : values[values.Length / 2];
            }

            var (n, o, m) = (Median("nats-server"), Median("ours"), Median("mosquitto"));
            string Format(double? value) => value is { } v ? v.ToString(v >= 100 ? "N0" : "0.00", CultureInfo.InvariantCulture) : "n/a";
            string Ratio(double? a, double? b) => a is { } x && b is { } y && y > 0 ? (x / y).ToString("0.00", CultureInfo.InvariantCulture) + "x" : "n/a";
            log.WriteLine($"| {row.Key} | {Format(n)} | {Format(o)} | {Format(m)} | {Ratio(o, n)} | {Ratio(o, m)} |");
        }

        return 0;
    }

    // The rows to run (Run's rows), or null for all.
    private static string? rowFilter;

    private static bool Selected(string row) => rowFilter is null || row.Contains(rowFilter, StringComparison.Ordinal);

    private static void Measure(TextWriter log, List<(string Row, string Server, double Value)> results, string row, MqttServer server, Func<double> run)
    {
        if (!Selected(row))
        {
            return;
        }

        try
        {
            results.Add((row, server.Name, run()));
        }
        catch (Exception ex) when (ex is InvalidOperationException or IOException or SocketException)
        {
            log.WriteLine($"{row} on {server.Name} failed: {ex.Message}");
        }
    }

    /// <summary>
    /// One publisher and one subscriber on one topic, both speaking <paramref name="level"/> (4: MQTT 3.1.1, 5: MQTT 5);
    /// the publisher stays at most a window ahead.
    /// </summary>
    private static double PubSub(MqttServer server, byte qos, long count, int run, CancellationToken cancellationToken, byte level = 4)
    {
        var topic = $"bench/v{level}q{qos}/{run}";
        using var subscriber = MqttWire.ConnectAsync(server.Mqtt, $"sub-{level}-{qos}-{run}", cancellationToken, level).GetAwaiter().GetResult();
        subscriber.SubscribeAsync(topic, qos, cancellationToken).GetAwaiter().GetResult();
        using var publisher = MqttWire.ConnectAsync(server.Mqtt, $"pub-{level}-{qos}-{run}", cancellationToken, level).GetAwaiter().GetResult();
        long received = 0;
        long acked = 0;
        var frame = MqttWire.Publish(topic, Payload, qos, level: level);
        var batch = new byte[frame.Length * Batch];
        for (var i = 0; i < Batch; i++)
        {
            frame.CopyTo(batch, i * frame.Length);
        }

        var idOffset = frame.Length - Payload - (level == 5 ? 3 : 2);
        var started = Stopwatch.GetTimestamp();
        Exception? failure = null;
        var reader = new Thread(() =>
        {
            try
            {
                subscriber.CountPublishes(c => c >= count, c => Volatile.Write(ref received, c));
            }
            catch (Exception ex) when (ex is IOException or SocketException)
            {
                failure = ex;
                Volatile.Write(ref received, long.MaxValue / 2);
            }
        }) { IsBackground = true };
        reader.Start();
        var ackReader = qos > 0 ? new Thread(() =>
        {
            try
            {
                publisher.CountAcks(c => c >= count, c => Volatile.Write(ref acked, c));
            }
            catch (Exception ex) when (ex is IOException or SocketException)
            {
                failure = ex;
                Volatile.Write(ref received, long.MaxValue / 2);
                Volatile.Write(ref acked, long.MaxValue / 2);
            }
        }) { IsBackground = true } : null;
        ackReader?.Start();
        long sent = 0;
        ushort id = 0;
        while (sent < count)
        {
            var window = qos switch { 0 => Window, 1 => Qos1Window, _ => Qos2Window };
            var n = (int)Math.Min(Math.Min(Batch, window), count - sent);
            while (sent + n - Volatile.Read(ref received) > window || (qos > 0 && sent + n - Volatile.Read(ref acked) > window))
            {
                Thread.SpinWait(50);
            }

            if (qos > 0)
            {
                for (var i = 0; i < n; i++)
                {
                    id = (ushort)(id == ushort.MaxValue ? 1 : id + 1);
                    batch[(i * frame.Length) + idOffset] = (byte)(id >> 8);
                    batch[(i * frame.Length) + idOffset + 1] = (byte)id;
                }
            }

            publisher.Send(batch.AsSpan(0, n * frame.Length));
            sent += n;
        }

        if (!reader.Join(TimeSpan.FromMinutes(2)) || failure is not null)
        {
            throw new InvalidOperationException($"{server.Name}: the subscriber got {Volatile.Read(ref received)} of {count}: {failure?.Message}{Environment.NewLine}{server.OutputTail}");
        }

        var elapsed = Stopwatch.GetElapsedTime(started);
        ackReader?.Join(TimeSpan.FromSeconds(30));
        return count / elapsed.TotalSeconds;
    }

    /// <summary>A NATS publisher (raw PUB frames on the NATS port) and an MQTT subscriber on the mapped topic.</summary>
    private static double NatsToMqtt(MqttServer server, long count, int run, CancellationToken cancellationToken)
    {
        using var subscriber = MqttWire.ConnectAsync(server.Mqtt, $"nats-sub-{run}", cancellationToken).GetAwaiter().GetResult();
        subscriber.SubscribeAsync($"bench/nats/{run}", 0, cancellationToken).GetAwaiter().GetResult();
        using var nats = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        nats.Connect(server.Nats!);
        nats.Send("CONNECT {\"verbose\":false,\"pedantic\":false}\r\nPING\r\n"u8);
        var scratch = new byte[4096];
        var seen = new StringBuilder();
        while (!seen.ToString().Contains("PONG", StringComparison.Ordinal))
        {
            seen.Append(Encoding.ASCII.GetString(scratch, 0, nats.Receive(scratch)));
        }

        var frame = Encoding.ASCII.GetBytes($"PUB bench.nats.{run} {Payload}\r\n{new string('x', Payload)}\r\n");
        var batch = new byte[frame.Length * Batch];
        for (var i = 0; i < Batch; i++)
        {
            frame.CopyTo(batch, i * frame.Length);
        }

        long received = 0;
        var started = Stopwatch.GetTimestamp();
        var reader = new Thread(() => subscriber.CountPublishes(c => c >= count, c => Volatile.Write(ref received, c))) { IsBackground = true };
        reader.Start();
        long sent = 0;
        while (sent < count)
        {
            var n = (int)Math.Min(Batch, count - sent);
            while (sent + n - Volatile.Read(ref received) > Window)
            {
                Thread.SpinWait(50);
            }

            nats.Send(batch.AsSpan(0, n * frame.Length));
            sent += n;
        }

        if (!reader.Join(TimeSpan.FromMinutes(2)))
        {
            throw new TimeoutException($"{server.Name}: the MQTT subscriber got {Volatile.Read(ref received)} of {count}");
        }

        return count / Stopwatch.GetElapsedTime(started).TotalSeconds;
    }

    /// <summary>
    /// How long after the last session subscribed the memory per session is read: what a user holding the sessions sees
    /// from then on. The connect burst makes each server start threads (ours: thread-pool workers, 17 -> 27-41 threads
    /// at 10,000 sessions), which retire after 20 s idle, and ours collects and trims the C heap after the burst; read
    /// 2 s after the connects, the figure moved by up to a kilobyte a session from run to run with where those fell
    /// (docs/benchmarks.md, rss1). The reading 2 s after the connects is kept as its own row: it is what a user sees
    /// during those seconds. The same moment for every server.
    /// </summary>
    internal static readonly TimeSpan SessionSettle = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Opens <paramref name="count"/> clean sessions, each subscribed to its own topic at <paramref name="qos"/>, 100 at
    /// a time (QoS 1: 10); the memory per session <see cref="SessionSettle"/> after the last subscribed (and 2 s after);
    /// after they close, how much of the memory they took stayed (share of the baseline, the lowest read within 30 s:
    /// the compacting collection after a burst waits 2 s of quiet).
    /// </summary>
    private static (double BytesPerSession, double BytesPerSessionEarly, double Seconds, double LeftAboveBaseline) Sessions(MqttServer server, int count, byte qos, bool smoke, CancellationToken cancellationToken)
    {
        FileDescriptorLimit.Ensure((ulong)count + 1024);
        // One session first, gone before the baseline: the server makes what every session shares (for QoS 1 the
        // adapter's JetStream streams, which concurrent first subscribers would race to create) and is warmed up.
        using (var warm = MqttWire.ConnectAsync(server.Mqtt, "session-warm-up", cancellationToken).GetAwaiter().GetResult())
        {
            warm.SubscribeAsync("sessions/warm-up", qos, cancellationToken).GetAwaiter().GetResult();
        }

        Thread.Sleep(1000);
        var before = server.ResidentBytes;
        var wires = new MqttWire[count];
        var started = Stopwatch.GetTimestamp();
        // QoS 1 subscriptions create a JetStream consumer each, which both brokers' JetStream API serves one at a time:
        // ten at a time keeps every request within its timeout (a timed-out one is granted QoS 0) on a loaded machine.
        Parallel.ForAsync(0, count, new ParallelOptions { MaxDegreeOfParallelism = qos == 0 ? 100 : 10, CancellationToken = cancellationToken }, async (i, token) =>
        {
            var wire = await MqttWire.ConnectAsync(server.Mqtt, $"session-{i}", token).ConfigureAwait(false);
            await wire.SubscribeAsync($"sessions/{i}", qos, token).ConfigureAwait(false);
            wires[i] = wire;
        }).GetAwaiter().GetResult();
        var seconds = Stopwatch.GetElapsedTime(started).TotalSeconds;
        var connected = Stopwatch.StartNew();
        Thread.Sleep(2000);
        var early = server.ResidentBytes;
        var settle = smoke ? TimeSpan.Zero : SessionSettle - connected.Elapsed;
        if (settle > TimeSpan.Zero)
        {
            Task.Delay(settle, cancellationToken).GetAwaiter().GetResult();
        }

        var after = smoke ? early : server.ResidentBytes;
        foreach (var wire in wires)
        {
            wire.Dispose();
        }

        var left = Load.IdleConnections.ReadAfterLeave(() => server.ResidentBytes, before, smoke ? TimeSpan.Zero : Load.IdleConnections.LeaveSettle, cancellationToken);
        return ((double)(after - before) / count, (double)(early - before) / count, seconds, (double)(left - before) / before);
    }
}
