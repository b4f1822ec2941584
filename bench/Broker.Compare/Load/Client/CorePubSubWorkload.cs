using System.Diagnostics;
using NATS.Client.Core;

namespace Broker.Compare.Load.Client;

/// <summary>
/// <see cref="PubSubWorkload"/> driven as an application drives NATS.Client.Core: publishers await
/// <c>PublishAsync</c> per message, subscribers <c>await foreach</c> over <c>SubscribeAsync&lt;byte[]&gt;</c>. Each
/// subscriber must receive exactly <c>count</c> messages of the right size (the subscription waits rather than drops
/// when it falls behind, so a loss is the server's). Without subscribers the run ends when a PING after the last
/// publish is answered. Units as the lean generator's; across a leaf link as the lean generator's.
/// </summary>
internal sealed class CorePubSubWorkload(int payloadSize, int publishers, int subscribers) : IWorkload
{
    public long CalibrationCount => payloadSize >= 4096 ? 5_000 : 20_000;

    public long SmokeCount => payloadSize >= 4096 ? 100 : 2_000;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken) =>
        CoreRun.Run(run => RunAsync(server, count, subject, run), cancellationToken);

    private async Task<Measurement> RunAsync(NatsEndpoint server, long count, string subject, CoreRun run)
    {
        var cancellationToken = run.Token;
        var subscriptions = new List<INatsSub<byte[]>>();
        for (var i = 0; i < subscribers; i++)
        {
            var connection = await run.ConnectAsync(server.Subscribers, $"subscriber-{i}").ConfigureAwait(false);
            subscriptions.Add(await connection.SubscribeCoreAsync<byte[]>(subject, cancellationToken: cancellationToken).ConfigureAwait(false));
            await connection.PingAsync(cancellationToken).ConfigureAwait(false);
        }

        var publisherConnections = new List<NatsConnection>();
        for (var i = 0; i < publishers; i++)
        {
            publisherConnections.Add(await run.ConnectAsync(server, $"publisher-{i}").ConfigureAwait(false));
        }

        if (subscribers > 0)
        {
            await LinkInterest.WaitAsync(server, subject, run).ConfigureAwait(false);
        }

        var payload = new byte[payloadSize];
        var start = Stopwatch.GetTimestamp();
        var receiving = subscriptions.Select(s => Task.Run(() => ReceiveAsync(s, count, cancellationToken), cancellationToken)).ToList();
        var publishing = publisherConnections.Select((c, i) => Task.Run(() => PublishAsync(c, subject, payload, WorkloadTiming.Share(count, publishers, i), cancellationToken), cancellationToken)).ToList();
        var finished = await Task.WhenAll(receiving.Concat(publishing)).ConfigureAwait(false);
        var messages = subscribers == 0 ? count : count * subscribers;
        var end = subscribers == 0 ? finished.Max() : finished.Take(subscribers).Max();
        foreach (var subscription in subscriptions)
        {
            await subscription.DisposeAsync().ConfigureAwait(false);
        }

        return new Measurement(messages, messages * payloadSize, WorkloadTiming.Between(start, end));
    }

    private static async Task<long> PublishAsync(NatsConnection connection, string subject, byte[] payload, long count, CancellationToken cancellationToken)
    {
        for (long i = 0; i < count; i++)
        {
            // PublishAsync looks at the token only when it has to wait: a failed run must stop publishing at once.
            cancellationToken.ThrowIfCancellationRequested();
            await connection.PublishAsync(subject, payload, cancellationToken: cancellationToken).ConfigureAwait(false);
        }

        // Answered once the server has processed every publish before it.
        await connection.PingAsync(cancellationToken).ConfigureAwait(false);
        return Stopwatch.GetTimestamp();
    }

    private async Task<long> ReceiveAsync(INatsSub<byte[]> subscription, long expected, CancellationToken cancellationToken)
    {
        long received = 0;
        await foreach (var message in subscription.Msgs.ReadAllAsync(cancellationToken).ConfigureAwait(false))
        {
            if ((message.Data?.Length ?? 0) != payloadSize)
            {
                throw new InvalidOperationException($"a message of {message.Data?.Length ?? 0} bytes arrived, {payloadSize} expected");
            }

            if (++received == expected)
            {
                return Stopwatch.GetTimestamp();
            }
        }

        throw new InvalidOperationException($"Subscriber received {received:N0} of {expected:N0} messages: the subscription ended");
    }
}
