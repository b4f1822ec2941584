using System.Threading.Channels;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit.Abstractions;

namespace Broker.WebSocket.Tests;

/// <summary>
/// A WebSocket subscriber that reads more slowly than its publisher writes holds the publisher back, as a plain TCP
/// one does (Broker.Protocol.Tests' ProducerStallTests), instead of being cut off as a slow consumer. The WebSocket
/// buffer sits above the socket's, each pausing its writer at three quarters of max_pending: producers stalled only
/// when the WebSocket buffer's flush stopped completing, so the two together passed max_pending (the slow-consumer
/// rule) first, and NATS.Client.Core's subscriber in the comparison harness's WebSocket pub/sub row was closed in about
/// one run in four (docs/benchmarks.md, the late-afternoon round of 2026-11-29; scripts/ws-pubsub-stall). Producers now
/// stall on the layers' sum (IPendingOutputFeature.WhenPendingAtMost; "tlsstall"), as Broker.Tls.Tests'
/// SlowSubscriberTests checks for TLS. nats-server never closed it.
/// </summary>
public sealed class SlowSubscriberTests(ITestOutputHelper output)
{
    private const int PayloadSize = 1024;
    private const int Messages = 8_000;

    [Fact(Timeout = 180_000)]
    public async Task A_slow_but_reading_websocket_subscriber_gets_everything_and_stays_connected()
    {
        // A reader the machine does not run for a few hundred milliseconds is, to the server, one that stopped (closed
        // by rule past the stall grace); tried up to three times on a fresh broker, so one that cuts off readers that
        // keep reading still fails every attempt.
        var failures = new List<string>();
        for (var attempt = 0; attempt < 3; attempt++)
        {
            var started = DateTime.UtcNow;
            var failure = await AttemptAsync();
            output.WriteLine($"attempt {attempt + 1}: {failure ?? "every message, nobody closed"} ({(DateTime.UtcNow - started).TotalSeconds:F1} s)");
            if (failure is null)
            {
                return;
            }

            failures.Add(failure);
        }

        Assert.Fail(string.Join("; ", failures));
    }

    // null when the subscriber got every message and the broker closed nobody; else what went wrong.
    private static async Task<string?> AttemptAsync()
    {
        await using var broker = await WsBroker.StartAsync(options =>
        {
            options.MaxPending = 1024 * 1024;
            options.MaxPayload = 64 * 1024;
        });
        var url = broker.WebSocketUri().ToString();
        await using var subscriber = new NatsConnection(Options(url, "slow-sub"));
        await subscriber.ConnectAsync();
        var subscription = await subscriber.SubscribeCoreAsync<byte[]>("load");
        await subscriber.PingAsync();
        await using var publisher = new NatsConnection(Options(url, "fast-pub"));
        await publisher.ConnectAsync();

        // 8 MB, eight times max_pending, published as fast as the client goes; the subscriber takes 32 messages, then
        // pauses 2 ms (about 16 MB/s), on a thread of its own so a busy pool does not hold it up.
        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var receiving = Task.Factory.StartNew(() => Receive(subscription, deadline.Token), TaskCreationOptions.LongRunning);
        var payload = new byte[PayloadSize];
        for (var i = 0; i < Messages; i++)
        {
            await publisher.PublishAsync("load", payload, cancellationToken: deadline.Token);
        }

        await publisher.PingAsync(deadline.Token);
        var received = await receiving;
        if (broker.Logs.Contains("Slow Consumer"))
        {
            return $"a slow consumer was closed (received {received} of {Messages})";
        }

        if (received != Messages)
        {
            return $"received {received} of {Messages}";
        }

        await subscriber.PingAsync();
        return null;
    }

    private static int Receive(INatsSub<byte[]> subscription, CancellationToken cancellationToken)
    {
        var received = 0;
        try
        {
            while (received < Messages)
            {
                if (!subscription.Msgs.TryRead(out _))
                {
                    if (!subscription.Msgs.WaitToReadAsync(cancellationToken).AsTask().GetAwaiter().GetResult())
                    {
                        break;
                    }

                    continue;
                }

                if (++received % 32 == 0)
                {
                    Thread.Sleep(2);
                }
            }
        }
        catch (OperationCanceledException)
        {
        }

        return received;
    }

    // As the harness's NATS.Client.Core rows: no reconnect, and a full subscription channel holds the socket reader.
    private static NatsOpts Options(string url, string name) => NatsOpts.Default with
    {
        Url = url,
        Name = name,
        MaxReconnectRetry = 0,
        SubPendingChannelCapacity = 64,
        SubPendingChannelFullMode = BoundedChannelFullMode.Wait,
    };
}
