using System.Diagnostics;

namespace Broker.Compare.Load;

/// <summary>What the connection-scale run measured for one server.</summary>
internal sealed record ScaleMeasurement(int Connections, TimeSpan ConnectTime, long RssBefore, long RssAfter)
{
    /// <summary>Resident memory the server gained per connection, in bytes.</summary>
    public double BytesPerConnection => (double)(RssAfter - RssBefore) / Connections;
}

/// <summary>
/// The connection-scale row: opens <c>n</c> idle connections, each with one subscription, and confirms every one
/// with PING/PONG (CONNECT + SUB + PING, PONG read back), from a few threads in parallel. Measures the time until
/// the last PONG and the server's resident memory (VmRSS) before and after, read through
/// <c>readServerRss</c>. All connections are then reset (no TIME_WAIT left behind).
/// </summary>
internal static class IdleConnections
{
    private const int ConnectThreads = 8;

    public static ScaleMeasurement Run(NatsEndpoint server, int count, Func<long> readServerRss, TimeSpan settle, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(readServerRss);
        using var scope = new RunScope(cancellationToken);
        var sockets = new NatsSocket?[count];
        try
        {
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
            return new ScaleMeasurement(count, elapsed, before, after);
        }
        finally
        {
            foreach (var socket in sockets)
            {
                socket?.Abort();
            }
        }
    }
}
