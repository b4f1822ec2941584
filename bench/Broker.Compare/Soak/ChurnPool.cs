using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Broker.Compare.Load;
using Broker.Compare.Mqtt;

namespace Broker.Compare.Soak;

/// <summary>
/// The churned clients: a slot per NATS connection and per MQTT session, each with one subscription of its own
/// (<c>soak.churn.N</c>, <c>soak/churn/N</c>). Workers replace a random slot's client at a steady rate: close it (NATS
/// with a reset, MQTT with DISCONNECT), open a new one and subscribe again. A worker owns a slot while it works on it
/// (the slot is empty meanwhile), so the keep-alive pass and other workers skip it. Every connect that fails is
/// counted with its first error. With <c>accounts</c> (the two-account soak, <see cref="SoakAccounts"/>), every odd NATS
/// slot logs in to the importing account and subscribes to the prefixed subject, so its connect and close add and
/// remove an import subscription.
/// </summary>
internal sealed class ChurnPool(NatsEndpoint nats, IPEndPoint mqtt, int natsCount, int mqttCount, bool accounts = false)
{
    private static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(30);

    private readonly NatsSocket?[] natsSlots = new NatsSocket?[natsCount];
    private readonly MqttWire?[] mqttSlots = new MqttWire?[mqttCount];
    private long generation;
    private long connects;
    private long failures;
    private int open;
    private string? firstFailure;

    /// <summary>Connections opened (fill and churn), successful or not.</summary>
    public long Connects => Interlocked.Read(ref connects);

    public long Failures => Interlocked.Read(ref failures);

    public string? FirstFailure => Volatile.Read(ref firstFailure);

    /// <summary>Churned clients open now.</summary>
    public int Open => Volatile.Read(ref open);

    /// <summary>Opens every slot's client from <paramref name="threads"/> threads.</summary>
    public void Fill(int threads, CancellationToken cancellationToken)
    {
        var next = -1;
        var total = natsSlots.Length + mqttSlots.Length;
        var workers = Enumerable.Range(0, threads).Select(_ => new Thread(() =>
        {
            int index;
            while ((index = Interlocked.Increment(ref next)) < total && !cancellationToken.IsCancellationRequested)
            {
                if (index < natsSlots.Length)
                {
                    natsSlots[index] = OpenNats(index);
                }
                else
                {
                    mqttSlots[index - natsSlots.Length] = OpenMqtt(index - natsSlots.Length);
                }
            }
        }) { IsBackground = true }).ToList();
        workers.ForEach(w => w.Start());
        workers.ForEach(w => w.Join());
    }

    /// <summary>
    /// Replaces clients at <paramref name="perSecond"/> (NATS and MQTT alternating) from <paramref name="threads"/>
    /// workers until <paramref name="stop"/> is cancelled; returns the replacements made.
    /// </summary>
    public long Churn(int perSecond, int threads, CancellationToken stop)
    {
        if (perSecond == 0 || natsSlots.Length + mqttSlots.Length == 0)
        {
            stop.WaitHandle.WaitOne();
            return 0;
        }

        long scheduled = -1;
        var started = Stopwatch.GetTimestamp();
        var workers = Enumerable.Range(0, threads).Select(seed => new Thread(() =>
        {
            var random = new Random(seed);
            while (!stop.IsCancellationRequested)
            {
                // Operation n is due at n / perSecond seconds; a worker waits for its turn, so the rate holds however
                // long single connects take (as long as the workers keep up; the achieved rate is reported).
                var n = Interlocked.Increment(ref scheduled);
                var due = TimeSpan.FromSeconds((double)n / perSecond) - Stopwatch.GetElapsedTime(started);
                if (due > TimeSpan.Zero && stop.WaitHandle.WaitOne(due))
                {
                    return;
                }

                var useNats = mqttSlots.Length == 0 || (natsSlots.Length > 0 && n % 2 == 0);
                if (useNats)
                {
                    Replace(natsSlots, random, Close, OpenNats);
                }
                else
                {
                    Replace(mqttSlots, random, Close, OpenMqtt);
                }
            }
        }) { IsBackground = true }).ToList();
        workers.ForEach(w => w.Start());
        workers.ForEach(w => w.Join());
        return Math.Max(0, Interlocked.Read(ref scheduled) - threads + 1);
    }

    /// <summary>
    /// Keeps idle clients inside the servers' liveness checks: PONG for NATS (answers the server's PINGs, which the
    /// idle clients never read) and PINGREQ for MQTT (the keep-alive is 60 s).
    /// </summary>
    public void KeepAlive()
    {
        for (var i = 0; i < natsSlots.Length; i++)
        {
            if (Interlocked.Exchange(ref natsSlots[i], null) is { } socket)
            {
                Try(() => socket.SendPong());
                natsSlots[i] = socket;
            }
        }

        for (var i = 0; i < mqttSlots.Length; i++)
        {
            if (Interlocked.Exchange(ref mqttSlots[i], null) is { } wire)
            {
                Try(() => wire.Socket.Send(MqttWire.PingRequest));
                mqttSlots[i] = wire;
            }
        }
    }

    /// <summary>Closes every churned client (after the churn stopped).</summary>
    public void CloseAll()
    {
        for (var i = 0; i < natsSlots.Length; i++)
        {
            Close(Interlocked.Exchange(ref natsSlots[i], null));
        }

        for (var i = 0; i < mqttSlots.Length; i++)
        {
            Close(Interlocked.Exchange(ref mqttSlots[i], null));
        }
    }

    private static void Replace<T>(T?[] slots, Random random, Action<T?> close, Func<int, T?> openNew)
        where T : class
    {
        // Another worker may hold the slot picked; pick again.
        for (var attempt = 0; attempt < 16; attempt++)
        {
            var index = random.Next(slots.Length);
            if (Interlocked.Exchange(ref slots[index], null) is { } client)
            {
                close(client);
                slots[index] = openNew(index);
                return;
            }
        }
    }

    private NatsSocket? OpenNats(int slot)
        => accounts && slot % 2 == 1
            ? Connect(() => NatsSocket.Open(nats, "soak", $"SUB {SoakAccounts.Prefix}soak.churn.{slot} 1\r\n", user: SoakAccounts.ImportingUser))
            : Connect(() => NatsSocket.Open(nats, "soak", $"SUB soak.churn.{slot} 1\r\n"));

    private MqttWire? OpenMqtt(int slot)
        => Connect(() =>
        {
            using var timeout = new CancellationTokenSource(ConnectTimeout);
            var wire = MqttWire.ConnectAsync(mqtt, $"soak-{slot}-{Interlocked.Increment(ref generation)}", timeout.Token).GetAwaiter().GetResult();
            try
            {
                wire.SubscribeAsync($"soak/churn/{slot}", 0, timeout.Token).GetAwaiter().GetResult();
                return wire;
            }
            catch
            {
                wire.Dispose();
                throw;
            }
        });

    private T? Connect<T>(Func<T> open)
        where T : class
    {
        Interlocked.Increment(ref connects);
        try
        {
            var client = open();
            Interlocked.Increment(ref this.open);
            return client;
        }
        catch (Exception ex) when (ex is IOException or SocketException or TimeoutException or InvalidOperationException or OperationCanceledException)
        {
            Interlocked.Increment(ref failures);
            Interlocked.CompareExchange(ref firstFailure, ex.Message, null);
            return null;
        }
    }

    private void Close(NatsSocket? socket)
    {
        if (socket is not null)
        {
            socket.Abort();
            Interlocked.Decrement(ref open);
        }
    }

    private void Close(MqttWire? wire)
    {
        if (wire is not null)
        {
            Try(() => wire.Socket.Send(MqttWire.Disconnect));
            wire.Dispose();
            Interlocked.Decrement(ref open);
        }
    }

    private static void Try(Action send)
    {
        try
        {
            send();
        }
        catch (Exception ex) when (ex is SocketException or IOException or ObjectDisposedException)
        {
            // A client the server already closed; the churn replaces it in time, the sample shows the count.
        }
    }
}
