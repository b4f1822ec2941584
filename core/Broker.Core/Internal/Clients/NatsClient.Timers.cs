using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Keep-alive and authentication deadlines (nats-server <c>processPingTimer</c>, <c>setFirstPingTimer</c>,
/// <c>authTimeout</c>).
/// </summary>
internal sealed partial class NatsClient
{
    // nats-server sends the first PING after CONNECT early (after at most 2 s) to measure the round trip.
    private static readonly TimeSpan FirstPingInterval = TimeSpan.FromSeconds(2);

    // nats-server's DEFAULT_RTT_MEASUREMENT_INTERVAL: a PING is forced, even to a busy client, this long after the
    // last one, so the round trip stays measured.
    private const long RoundTripMeasurementMilliseconds = 60 * 60 * 1000;

    private Timer? pingTimer;
    private Timer? authTimer;
    private int pingsOutstanding;
    private long pingSentAt;

    /// <summary>Round-trip time measured by the last PING/PONG exchange, or zero.</summary>
    public TimeSpan RoundTrip { get; private set; }

    private void StartTimers()
    {
        var options = Server.Options;
        if (!authenticated)
        {
            authTimer = new Timer(static state => ((NatsClient)state!).OnAuthTimeout(), this, options.Authorization.Timeout, Timeout.InfiniteTimeSpan);
        }

        // Until CONNECT the full interval applies (nats-server setPingTimer at accept); CONNECT re-arms it shorter.
        pingTimer = new Timer(static state => ((NatsClient)state!).OnPingTimer(), this, options.PingInterval, Timeout.InfiniteTimeSpan);
    }

    /// <summary>
    /// On every CONNECT, as nats-server's setFirstPingTimer: the next PING comes after min(interval, 2 s) plus up to
    /// 20% jitter. Counting from CONNECT rather than accept keeps a server PING from overtaking the PONG a client
    /// waits for right after its CONNECT.
    /// </summary>
    private void RestartPingTimerAfterConnect()
    {
        var interval = Server.Options.PingInterval;
        var first = interval < FirstPingInterval ? interval : FirstPingInterval;
        first += TimeSpan.FromTicks(Random.Shared.NextInt64(Math.Max(first.Ticks / 5, 1)));
        try
        {
            pingTimer?.Change(first, Timeout.InfiniteTimeSpan);
        }
        catch (ObjectDisposedException)
        {
        }
    }

    private void OnPingTimer()
    {
        if (IsClosed)
        {
            return;
        }

        var options = Server.Options;
        var interval = options.PingInterval;
        var now = Environment.TickCount64;
        var idleFor = now - Volatile.Read(ref lastInputAt);
        var sentAt = Volatile.Read(ref pingSentAt);

        // Like nats-server: skip the PING while the client is sending data, unless a round-trip measurement is due.
        // The measurement is due when no PING was sent yet (or not for an hour), not until a PONG came back: a busy
        // client gets one PING, not one per interval, and is never closed as stale while it keeps sending.
        var measurementDue = sentAt == 0 || System.Diagnostics.Stopwatch.GetElapsedTime(sentAt).TotalMilliseconds > RoundTripMeasurementMilliseconds;
        if (measurementDue || idleFor >= (long)interval.TotalMilliseconds)
        {
            if (Interlocked.Increment(ref pingsOutstanding) > options.MaxPingsOutstanding)
            {
                Interlocked.Increment(ref Server.Statistics.StaleConnections);
                ClientLog.StaleConnection(logger, this);
                BeginClose(CloseReason.StaleConnection, ServerMessages.ErrStaleConnection);
                return;
            }

            Volatile.Write(ref pingSentAt, System.Diagnostics.Stopwatch.GetTimestamp());
            SendProtocol(ServerMessages.Ping, flushNow: true);
        }

        try
        {
            pingTimer?.Change(interval, Timeout.InfiniteTimeSpan);
        }
        catch (ObjectDisposedException)
        {
        }
    }

    private void OnPongReceived()
    {
        Volatile.Write(ref pingsOutstanding, 0);
        var sentAt = Volatile.Read(ref pingSentAt);
        if (sentAt != 0)
        {
            // Stopwatch resolution, so /connz shows a sub-millisecond loopback rtt as nats-server does.
            RoundTrip = System.Diagnostics.Stopwatch.GetElapsedTime(sentAt);
        }
    }

    private void OnAuthTimeout()
    {
        if (Volatile.Read(ref authenticated) || IsClosed)
        {
            return;
        }

        ClientLog.AuthenticationTimeout(logger, this);
        BeginClose(CloseReason.AuthenticationTimeout, ServerMessages.ErrAuthenticationTimeout);
    }

    private void StopAuthTimer()
    {
        Interlocked.Exchange(ref authTimer, null)?.Dispose();
    }

    private void StopTimers()
    {
        StopAuthTimer();
        Interlocked.Exchange(ref pingTimer, null)?.Dispose();
    }
}
