using System.Diagnostics;

namespace Broker.Core.Internal.Clients;

/// <summary>What <see cref="KeepAlive"/> needs from its connection: the ping options, a PING sent, a stale close.</summary>
internal interface IKeepAliveConnection
{
    /// <summary>The current <c>ping_interval</c> (read on every tick: a reload may change it).</summary>
    TimeSpan PingInterval { get; }

    /// <summary>The current <c>ping_max</c>.</summary>
    int MaxPingsOutstanding { get; }

    /// <summary>Whether the connection is closing or closed; a closed connection is not pinged.</summary>
    bool IsClosed { get; }

    /// <summary>Sends PING and flushes it at once.</summary>
    void SendPing();

    /// <summary>Closes the connection as stale (more PINGs unanswered than <c>ping_max</c>).</summary>
    void CloseStale();
}

/// <summary>
/// A connection's keep-alive (nats-server's <c>pinfo</c>, <c>processPingTimer</c>, <c>setFirstPingTimer</c>): the ping
/// timer, the PINGs not answered yet, the round trip of the last exchange and when the client last sent anything.
/// A client that keeps sending is not pinged (its input proves it alive) except for one round-trip measurement an hour;
/// an idle one is pinged every interval and closed as stale when more than <c>ping_max</c> PINGs go unanswered.
/// </summary>
internal sealed class KeepAlive : IDisposable
{
    // nats-server sends the first PING after CONNECT early (after at most 2 s) to measure the round trip.
    private static readonly TimeSpan FirstPingInterval = TimeSpan.FromSeconds(2);

    // nats-server's DEFAULT_RTT_MEASUREMENT_INTERVAL: a PING is forced, even to a busy client, this long after the
    // last one, so the round trip stays measured.
    private const long RoundTripMeasurementMilliseconds = 60 * 60 * 1000;

    private readonly IKeepAliveConnection connection;
    private Timer? timer;
    private int pingsOutstanding;
    private long pingSentAt;
    private long lastInputAt = Environment.TickCount64;

    public KeepAlive(IKeepAliveConnection connection)
    {
        this.connection = connection;
    }

    /// <summary>Round-trip time measured by the last PING/PONG exchange, or zero.</summary>
    public TimeSpan RoundTrip { get; private set; }

    /// <summary>When the client last sent anything, as <see cref="Environment.TickCount64"/>.</summary>
    public long LastInputTick => Volatile.Read(ref lastInputAt);

    /// <summary>PINGs sent and not answered yet.</summary>
    public int PingsOutstanding => Volatile.Read(ref pingsOutstanding);

    /// <summary>Notes input from the client (once per read): a client sending data is not pinged.</summary>
    public void InputReceived() => Volatile.Write(ref lastInputAt, Environment.TickCount64);

    /// <summary>
    /// Starts the timer with the full interval: until CONNECT it applies as is (nats-server's setPingTimer at
    /// accept); <see cref="RestartAfterConnect"/> re-arms it shorter.
    /// </summary>
    public void Start()
    {
        timer = new Timer(static state => ((KeepAlive)state!).OnTimer(), this, connection.PingInterval, Timeout.InfiniteTimeSpan);
    }

    /// <summary>
    /// On every CONNECT, as nats-server's setFirstPingTimer: the next PING comes after min(interval, 2 s) plus up to
    /// 20% jitter. Counting from CONNECT rather than accept keeps a server PING from overtaking the PONG a client
    /// waits for right after its CONNECT.
    /// </summary>
    public void RestartAfterConnect()
    {
        var interval = connection.PingInterval;
        var first = interval < FirstPingInterval ? interval : FirstPingInterval;
        first += TimeSpan.FromTicks(Random.Shared.NextInt64(Math.Max(first.Ticks / 5, 1)));
        Rearm(first);
    }

    /// <summary>
    /// The first estimate of the round trip, from the connection's start to its CONNECT (nats-server's
    /// <c>processConnect</c>: <c>c.rtt = computeRTT(c.start)</c>), until a PONG measures it.
    /// </summary>
    public void EstimateRoundTrip(TimeSpan sinceStart) => RoundTrip = sinceStart > TimeSpan.Zero ? sinceStart : TimeSpan.FromTicks(1);

    /// <summary>A PONG from the client: nothing is outstanding any more, and the round trip is measured.</summary>
    public void PongReceived()
    {
        Volatile.Write(ref pingsOutstanding, 0);
        var sentAt = Volatile.Read(ref pingSentAt);
        if (sentAt != 0)
        {
            // Stopwatch resolution, so /connz shows a sub-millisecond loopback rtt as nats-server does.
            RoundTrip = Stopwatch.GetElapsedTime(sentAt);
        }
    }

    /// <summary>Stops the timer for good (the connection ended).</summary>
    public void Dispose() => Interlocked.Exchange(ref timer, null)?.Dispose();

    /// <summary>
    /// One tick of the timer with the interval read for it: sends a PING when one is due, or closes the connection as
    /// stale. Returns <see langword="false"/> when the timer must not be re-armed (the connection is closed or closing).
    /// </summary>
    internal bool Tick(TimeSpan interval)
    {
        if (connection.IsClosed)
        {
            return false;
        }

        var idleFor = Environment.TickCount64 - Volatile.Read(ref lastInputAt);
        var sentAt = Volatile.Read(ref pingSentAt);

        // Like nats-server: skip the PING while the client is sending data, unless a round-trip measurement is due.
        // The measurement is due when no PING was sent yet (or not for an hour), not until a PONG came back: a busy
        // client gets one PING, not one per interval, and is never closed as stale while it keeps sending.
        var measurementDue = sentAt == 0 || Stopwatch.GetElapsedTime(sentAt).TotalMilliseconds > RoundTripMeasurementMilliseconds;
        if (measurementDue || idleFor >= (long)interval.TotalMilliseconds)
        {
            if (Interlocked.Increment(ref pingsOutstanding) > connection.MaxPingsOutstanding)
            {
                connection.CloseStale();
                return false;
            }

            Volatile.Write(ref pingSentAt, Stopwatch.GetTimestamp());
            connection.SendPing();
        }

        return true;
    }

    private void OnTimer()
    {
        // One read of the interval for the decision and the re-arm (a reload may change it meanwhile).
        var interval = connection.PingInterval;
        if (Tick(interval))
        {
            Rearm(interval);
        }
    }

    private void Rearm(TimeSpan due)
    {
        try
        {
            timer?.Change(due, Timeout.InfiniteTimeSpan);
        }
        catch (ObjectDisposedException)
        {
        }
    }
}
