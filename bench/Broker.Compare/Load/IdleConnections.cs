using System.Diagnostics;

namespace Broker.Compare.Load;

/// <summary>What the connection-scale run measured for one server.</summary>
internal sealed record ScaleMeasurement(int Connections, TimeSpan ConnectTime, long RssBefore, long RssAfter)
{
    /// <summary>Resident memory after the clients left (<see cref="IdleConnections.ReadAfterLeave"/>); 0 when not read.</summary>
    public long RssAfterLeave { get; init; }

    /// <summary>What stayed after the clients left, above the baseline, as a share of the baseline (issue 25: within 10%).</summary>
    public double LeftAboveBaseline => RssAfterLeave == 0 ? 0 : (double)(RssAfterLeave - RssBefore) / RssBefore;

    /// <summary>Resident memory the server gained per connection, in bytes.</summary>
    public double BytesPerConnection => (double)(RssAfter - RssBefore) / Connections;
}

/// <summary>
/// The connection-scale row: opens <c>n</c> idle connections, each with one subscription, and confirms every one
/// with PING/PONG (CONNECT + SUB + PING, PONG read back), from a few threads in parallel. Measures the time until
/// the last PONG and the server's resident memory (VmRSS) before and after (before: once one warm-up connection came
/// and went, on every server alike), read through
/// <c>readServerRss</c>. All connections are then reset (no TIME_WAIT left behind), and the resident memory is read
/// again while the server gives back what they held (<see cref="ReadAfterLeave"/>).
/// </summary>
internal static class IdleConnections
{
    private const int ConnectThreads = 8;

    /// <summary>
    /// How long the server is given after the clients left, at most: its compacting collection waits until no
    /// connection closed for 2 s, and closing thousands takes a while. Read every half second until within 10% of the
    /// baseline.
    /// </summary>
    public static readonly TimeSpan LeaveSettle = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The lowest resident memory read every half second for up to <see cref="LeaveSettle"/>, stopping once it is
    /// within 10% of <paramref name="baseline"/>.
    /// </summary>
    public static long ReadAfterLeave(Func<long> readServerRss, long baseline, CancellationToken cancellationToken) => ReadAfterLeave(readServerRss, baseline, LeaveSettle, cancellationToken);

    /// <inheritdoc cref="ReadAfterLeave(Func{long}, long, CancellationToken)"/>
    /// <param name="readServerRss">Reads the server's resident memory.</param>
    /// <param name="baseline">The resident memory before the clients came.</param>
    /// <param name="limit">How long to keep reading (zero: once, as smoke runs do).</param>
    /// <param name="cancellationToken">Stops the wait.</param>
    public static long ReadAfterLeave(Func<long> readServerRss, long baseline, TimeSpan limit, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(readServerRss);
        var lowest = long.MaxValue;
        var clock = Stopwatch.StartNew();
        while (true)
        {
            lowest = Math.Min(lowest, readServerRss());
            if (lowest <= baseline * 11 / 10 || clock.Elapsed >= limit)
            {
                return lowest;
            }

            Task.Delay(500, cancellationToken).GetAwaiter().GetResult();
        }
    }

    public static ScaleMeasurement Run(NatsEndpoint server, int count, Func<long> readServerRss, TimeSpan settle, CancellationToken cancellationToken, bool waitForReturn = true)
    {
        ArgumentNullException.ThrowIfNull(readServerRss);
        using var scope = new RunScope(cancellationToken);
        var sockets = new NatsSocket?[count];
        try
        {
            // One connection first, on both servers alike: what the first client loads once (code, the JSON reader of
            // CONNECT, a plugin's lazily read configuration) is a cost of the process, not of each connection, and read
            // after the baseline it was counted per connection (about 4 MB, 4 KiB per connection at 1,000).
            NatsSocket.Open(server, "idle", "SUB bench.warm 1\r\n", scope).Abort();
            Task.Delay(settle, cancellationToken).GetAwaiter().GetResult();
            var before = readServerRss();
            var next = -1;
            var start = Stopwatch.GetTimestamp();
            for (var t = 0; t < ConnectThreads; t++)
            {
                scope.Start($"connect-{t}", () =>
                {
                    int index;
                    while ((index = Interlocked.Increment(ref next)) < count)
                    {
                        sockets[index] = NatsSocket.Open(server, "idle", $"SUB bench.idle.{index} 1\r\n", scope);
                    }
                });
            }

            scope.Join(WorkloadTiming.RunTimeout);
            var elapsed = Stopwatch.GetElapsedTime(start);

            // Let the server finish whatever follows the last PONG (buffers returned, lazy allocations) before reading.
            Task.Delay(settle, cancellationToken).GetAwaiter().GetResult();
            var after = readServerRss();
            Abort(sockets);
            return new ScaleMeasurement(count, elapsed, before, after) { RssAfterLeave = ReadAfterLeave(readServerRss, before, waitForReturn ? LeaveSettle : TimeSpan.Zero, cancellationToken) };
        }
        finally
        {
            Abort(sockets);
        }
    }

    private static void Abort(NatsSocket?[] sockets)
    {
        for (var i = 0; i < sockets.Length; i++)
        {
            sockets[i]?.Abort();
            sockets[i] = null;
        }
    }
}
