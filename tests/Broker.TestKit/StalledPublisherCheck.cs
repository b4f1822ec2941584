using System.Diagnostics;
using System.Net;
using Broker.Core;
using NATS.Client.Core;
using Xunit;
using Xunit.Abstractions;

namespace Broker.TestKit;

/// <summary>
/// A publisher the broker stalls on a subscriber that stopped reading (three quarters of max_pending waiting for it)
/// must go on the moment that subscriber is closed, however it is closed: by the slow-consumer rule, by its reset, or
/// by its FIN while its output still cannot drain; and on each transport (the TLS and WebSocket buffers above the
/// socket's complete their drain waiters differently from the pipe's flush). NATS.Client.Core publishers publish as
/// fast as they can the whole time; each iteration connects a fresh <see cref="StoppedSubscriber"/> to the same broker,
/// ends it one of those ways at a chosen moment (before, during or after the producers' stall grace), then every
/// publisher must answer a PING within <see cref="PongWithin"/>. Last, the server must stop while they are stalled
/// (docs/benchmarks.md, "stallrelease").
/// </summary>
public static class StalledPublisherCheck
{
    /// <summary>How long a publisher may take to get its PONG once the subscriber is closed.</summary>
    public static readonly TimeSpan PongWithin = TimeSpan.FromSeconds(2);

    // How long the server may take to stop while publishers are stalled (BrokerServer.DrainTimeout is 5 s).
    private static readonly TimeSpan StopWithin = TimeSpan.FromSeconds(10);

    // The publishers' command timeout: what their dispose may wait (DisposeAsync below).
    private static readonly TimeSpan ClientCommandTimeout = TimeSpan.FromSeconds(5);

    private const string Subject = "stall.release";
    private const int PayloadSize = 4096;

    /// <summary>The broker settings: a 256 KB max_pending, so a stopped subscriber stalls its publishers within milliseconds.</summary>
    public static void Limits(BrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.MaxPending = 256 * 1024;
        options.MaxPayload = 64 * 1024;
    }

    /// <summary>
    /// Iterations per run: <paramref name="fallback"/>, or the environment's <c>STALL_RELEASE_ITERATIONS</c> (the
    /// stress: scripts/stall-release.sh).
    /// </summary>
    public static int Iterations(int fallback)
        => int.TryParse(Environment.GetEnvironmentVariable("STALL_RELEASE_ITERATIONS"), out var n) && n > 0 ? n : fallback;

    /// <summary>Runs <paramref name="iterations"/> subscribers against <paramref name="broker"/> (started with <see cref="Limits"/>).</summary>
    /// <param name="output">Where the iterations' figures are written.</param>
    /// <param name="broker">The broker, with <see cref="Limits"/>.</param>
    /// <param name="url">The URL the publishers connect to.</param>
    /// <param name="transport">The subscriber's transport (the same as the publishers').</param>
    /// <param name="subscriberEndPoint">Where the subscriber connects.</param>
    /// <param name="publishers">How many publishers feed the one subscriber.</param>
    /// <param name="iterations">How many subscribers, one after another.</param>
    /// <param name="options">Client options the transport needs (TLS trust), if any.</param>
    public static async Task RunAsync(
        ITestOutputHelper output,
        TestBroker broker,
        string url,
        SubscriberTransport transport,
        IPEndPoint subscriberEndPoint,
        int publishers,
        int iterations,
        Func<NatsOpts, NatsOpts>? options = null)
    {
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(broker);
        var connections = new List<NatsConnection>();
        using var stop = new CancellationTokenSource();
        using var serverStopping = new CancellationTokenSource();
        var publishing = new List<Task<long>>();
        var failures = new List<string>();
        var pongs = new List<double>();
        var closes = new int[3];
        var stopped = 0.0;
        try
        {
            for (var i = 0; i < publishers; i++)
            {
                var connection = new NatsConnection((options ?? (o => o))(NatsOpts.Default with { Url = url, Name = $"publisher-{i}", MaxReconnectRetry = 0, CommandTimeout = ClientCommandTimeout }));
                await connection.ConnectAsync();
                connections.Add(connection);
                publishing.Add(Task.Run(() => PublishAsync(connection, stop.Token, serverStopping.Token)));
            }

            var random = new Random(1234);
            for (var iteration = 0; iteration < iterations && failures.Count < 5; iteration++)
            {
                var how = (CloseBy)(iteration % 3);
                using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(10));
                await using var subscriber = await StoppedSubscriber.ConnectAsync(transport, subscriberEndPoint, Subject, deadline.Token);

                // Before the stall, inside the grace (StallPolicy.Grace, 250 ms) and past it.
                var wait = TimeSpan.FromMilliseconds(random.Next(0, 400));
                switch (how)
                {
                    case CloseBy.SlowConsumerRule:
                        if (!await WaitForAsync(() => ClosedAsSlowConsumer(broker, subscriber.LocalPort), TimeSpan.FromSeconds(5)))
                        {
                            failures.Add($"iteration {iteration}: the stopped subscriber was not closed as a slow consumer within 5 s");
                            continue;
                        }

                        break;
                    case CloseBy.Reset:
                        await Task.Delay(wait);
                        subscriber.Reset();
                        break;
                    default:
                        await Task.Delay(wait);
                        subscriber.HalfClose();
                        break;
                }

                closes[(int)how]++;
                for (var i = 0; i < connections.Count; i++)
                {
                    var started = Stopwatch.GetTimestamp();
                    try
                    {
                        await connections[i].PingAsync().AsTask().WaitAsync(PongWithin);
                        pongs.Add(Stopwatch.GetElapsedTime(started).TotalMilliseconds);
                    }
                    catch (TimeoutException)
                    {
                        failures.Add($"iteration {iteration} ({how}, after {wait.TotalMilliseconds} ms): publisher-{i} got no PONG within {PongWithin.TotalSeconds} s");
                    }
                }

                if (publishing.FirstOrDefault(p => p.IsCompleted) is { } ended)
                {
                    failures.Add($"iteration {iteration}: a publisher stopped: {ended.Exception?.GetBaseException().Message}");
                    break;
                }
            }

            if (failures.Count == 0)
            {
                // Last, the server stops while the publishers are stalled on a stopped subscriber: it must not wait for them.
                await using var last = await StoppedSubscriber.ConnectAsync(transport, subscriberEndPoint, Subject, CancellationToken.None);
                await Task.Delay(100);
                await serverStopping.CancelAsync();
                var stopping = Stopwatch.GetTimestamp();
                var serverStop = broker.Server.StopAsync();

                // Its graceful close could not send what it holds: the listeners' drain would wait for it (StopWithin).
                last.Reset();
                if (!await WaitForAsync(serverStop, StopWithin))
                {
                    failures.Add($"the server did not stop within {StopWithin.TotalSeconds} s while its publishers were stalled");
                }

                stopped = Stopwatch.GetElapsedTime(stopping).TotalMilliseconds;
            }
        }
        finally
        {
            await stop.CancelAsync();
            await Task.WhenAny(Task.WhenAll(publishing), Task.Delay(TimeSpan.FromSeconds(10)));
            await Task.WhenAll(connections.Select(DisposeAsync));
        }

        var published = 0L;
        for (var i = 0; i < publishing.Count; i++)
        {
            try
            {
                published += await publishing[i].WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is NatsException or TimeoutException)
            {
                failures.Add($"publisher-{i} failed: {ex.GetType().Name}: {ex.Message}");
            }
        }

        pongs.Sort();
        output.WriteLine(
            $"{transport}, {publishers} publisher(s): {iterations} subscribers (slow-consumer rule {closes[0]}, reset {closes[1]}, half-close {closes[2]}), " +
            $"{published:N0} messages published; PONG after the close: median {Percentile(pongs, 0.5):F1} ms, max {Percentile(pongs, 1):F1} ms; " +
            $"the server stopped in {stopped:F0} ms");
        foreach (var failure in failures)
        {
            output.WriteLine(failure);
        }

        Assert.Empty(failures);
    }

    private enum CloseBy
    {
        SlowConsumerRule,
        Reset,
        HalfClose,
    }

    // NATS.Client.Core 3.3.2 disposes its socket first, then sends UNSUB for its subscriptions: when the socket went
    // while its write buffer was over its pause threshold (a publisher at full speed, the server stopped), the UNSUB
    // waits for that buffer's flush, which its ended send loop never completes, for the command timeout, and throws.
    // That is the client's (docs/benchmarks.md, "stallrelease"; the same on nats-server), not what is checked here.
    private static async Task DisposeAsync(NatsConnection connection)
    {
        try
        {
            await connection.DisposeAsync();
        }
        catch (NatsTimeoutException)
        {
        }
    }

    // Publishes until stopped; once the server is stopping, whatever the client throws ends the loop too.
    private static async Task<long> PublishAsync(NatsConnection connection, CancellationToken stop, CancellationToken serverStopping)
    {
        var payload = new byte[PayloadSize];
        long published = 0;
        try
        {
            while (!stop.IsCancellationRequested)
            {
                await connection.PublishAsync(Subject, payload, cancellationToken: stop);
                published++;
            }
        }
        catch (Exception) when (stop.IsCancellationRequested || serverStopping.IsCancellationRequested)
        {
        }

        return published;
    }

    // The broker's warning names the client by its address (ClientLog.SlowConsumer).
    private static bool ClosedAsSlowConsumer(TestBroker broker, int port)
    {
        var address = $"127.0.0.1:{port} slow consumer detected";
        return broker.Logs.Entries.Any(e => e.Message.Contains(address, StringComparison.Ordinal));
    }

    private static async Task<bool> WaitForAsync(Task task, TimeSpan within) => await Task.WhenAny(task, Task.Delay(within)) == task;

    private static async Task<bool> WaitForAsync(Func<bool> condition, TimeSpan within)
    {
        var deadline = Stopwatch.GetTimestamp() + (long)(within.TotalSeconds * Stopwatch.Frequency);
        while (!condition())
        {
            if (Stopwatch.GetTimestamp() > deadline)
            {
                return false;
            }

            await Task.Delay(5);
        }

        return true;
    }

    private static double Percentile(List<double> sorted, double p) => sorted.Count == 0 ? 0 : sorted[Math.Min(sorted.Count - 1, (int)(p * sorted.Count))];
}
