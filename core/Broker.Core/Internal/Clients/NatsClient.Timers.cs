using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Keep-alive and authentication deadlines (nats-server <c>processPingTimer</c>, <c>setFirstPingTimer</c>,
/// <c>authTimeout</c>).
/// </summary>
internal sealed partial class NatsClient
{
    // nats-server sends the first PING early (after at most 2 s) to measure the round trip.
    private static readonly TimeSpan FirstPingInterval = TimeSpan.FromSeconds(2);

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
            authTimer = new Timer(static state => ((NatsClient)state!).OnAuthTimeout(), this, AuthTimeout, Timeout.InfiniteTimeSpan);
        }

        var first = options.PingInterval < FirstPingInterval ? options.PingInterval : FirstPingInterval;
        first += TimeSpan.FromTicks(Random.Shared.NextInt64(Math.Max(first.Ticks / 5, 1)));
        pingTimer = new Timer(static state => ((NatsClient)state!).OnPingTimer(), this, first, Timeout.InfiniteTimeSpan);
    }

    private void OnPingTimer()
    {
        if (IsClosed)
        {
            return;
        }

        var options = Server.Options;
        var interval = options.PingInterval;
        var idleFor = Environment.TickCount64 - Volatile.Read(ref lastInputAt);

        // Like nats-server: skip the PING while the client is sending data, unless the round trip is still unknown.
        if (RoundTrip == TimeSpan.Zero || idleFor >= (long)interval.TotalMilliseconds)
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
