using System.Threading.Channels;
using Broker.Core;
using NATS.Client.Core;
using Xunit;
using Xunit.Abstractions;

namespace Broker.TestKit;

/// <summary>
/// A subscriber that reads more slowly than its publisher writes holds the publisher back instead of being cut off as
/// a slow consumer, over a transport whose output buffer sits above the socket's (TLS, WebSocket), as over plain TCP
/// (Broker.Protocol.Tests' ProducerStallTests) and on nats-server. A NATS.Client.Core publisher sends 8 MB, eight times
/// max_pending, as fast as the client goes; the subscriber takes 32 messages, then pauses 2 ms (about 16 MB/s). Every
/// message must arrive and the broker must close nobody (docs/benchmarks.md, "tlsstall"; scripts/ws-pubsub-stall).
/// </summary>
public static class SlowSubscriberCheck
{
    private const int PayloadSize = 1024;
    private const int Messages = 8_000;

    /// <summary>The broker settings of an attempt: a 1 MB max_pending, so 8 MB must be paced.</summary>
    public static void Limits(BrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.MaxPending = 1024 * 1024;
        options.MaxPayload = 64 * 1024;
    }

    /// <summary>
    /// Runs the check on a fresh broker from <paramref name="start"/> (which applies <see cref="Limits"/>), up to three
    /// attempts: a reader the machine does not run for a few hundred milliseconds is, to the server, one that stopped
    /// (closed by rule past the stall grace), while a broker that cuts off readers that keep reading fails every attempt.
    /// </summary>
    /// <param name="output">Where each attempt's outcome is written.</param>
    /// <param name="start">Starts the broker; <paramref name="url"/> gives the client URL of the transport under test.</param>
    /// <param name="url">The URL the two clients connect to.</param>
    /// <param name="transport">Client options the transport needs (TLS trust), if any.</param>
    public static async Task RunAsync(ITestOutputHelper output, Func<Task<TestBroker>> start, Func<TestBroker, string> url, Func<NatsOpts, NatsOpts>? transport = null)
    {
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(start);
        ArgumentNullException.ThrowIfNull(url);
        var failures = new List<string>();
        for (var attempt = 0; attempt < 3; attempt++)
        {
            var started = DateTime.UtcNow;
            await using var broker = await start();
            var failure = await AttemptAsync(broker, url(broker), transport ?? (options => options));
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
    private static async Task<string?> AttemptAsync(TestBroker broker, string url, Func<NatsOpts, NatsOpts> transport)
    {
        await using var subscriber = new NatsConnection(transport(Options(url, "slow-sub")));
        await subscriber.ConnectAsync();
        var subscription = await subscriber.SubscribeCoreAsync<byte[]>("load");
        await subscriber.PingAsync();
        await using var publisher = new NatsConnection(transport(Options(url, "fast-pub")));
        await publisher.ConnectAsync();

        // The subscriber reads on a thread of its own, so a busy pool does not hold it up.
        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var receiving = Task.Factory.StartNew(() => Receive(subscription, deadline.Token), TaskCreationOptions.LongRunning);
        var payload = new byte[PayloadSize];
        try
        {
            for (var i = 0; i < Messages; i++)
            {
                await publisher.PublishAsync("load", payload, cancellationToken: deadline.Token);
            }

            await publisher.PingAsync(deadline.Token);
        }
        catch (OperationCanceledException)
        {
            return $"the publisher did not finish in time (received {await receiving} of {Messages})";
        }

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
