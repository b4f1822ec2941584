namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The keep-alive of a link to another server, leaf node or route (nats-server's <c>setFirstPingTimer</c> for a
/// non-client connection): the first PING after at most a second (it also measures the round trip the monitoring pages
/// show), then one per ping interval; a peer that leaves more than <c>ping_max</c> unanswered is stale.
/// </summary>
/// <param name="server">The broker (its ping interval and maximum).</param>
/// <param name="isClosed">Whether the link closed (the loop ends).</param>
/// <param name="sendPing">Writes a PING.</param>
/// <param name="close">Closes the link with a reason.</param>
internal sealed class LinkKeepAlive(BrokerCore server, Func<bool> isClosed, Action sendPing, Action<string> close)
{
    private static readonly TimeSpan FirstPingInterval = TimeSpan.FromSeconds(1);

    private int pingsOutstanding;
    private long pingSentAt;
    private long roundTripTicks;

    /// <summary>The last measured round trip, in nanoseconds (0 until measured).</summary>
    public long RoundTripNanoseconds => Volatile.Read(ref roundTripTicks) * 100;

    /// <summary>PINGs until the link closes.</summary>
    public async Task RunAsync()
    {
        var delay = server.Options.PingInterval < FirstPingInterval ? server.Options.PingInterval : FirstPingInterval;
        while (!isClosed())
        {
            await Task.Delay(delay).ConfigureAwait(false);
            delay = server.Options.PingInterval;
            if (isClosed())
            {
                return;
            }

            if (Interlocked.Increment(ref pingsOutstanding) > server.Options.MaxPingsOutstanding)
            {
                close("Stale Connection");
                return;
            }

            Volatile.Write(ref pingSentAt, System.Diagnostics.Stopwatch.GetTimestamp());
            sendPing();
        }
    }

    /// <summary>A PONG came: nothing is outstanding, and the round trip is measured.</summary>
    public void Pong()
    {
        Volatile.Write(ref pingsOutstanding, 0);
        var sent = Volatile.Read(ref pingSentAt);
        if (sent != 0)
        {
            Volatile.Write(ref roundTripTicks, System.Diagnostics.Stopwatch.GetElapsedTime(sent).Ticks);
        }
    }
}
