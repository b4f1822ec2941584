using System.Diagnostics;
using NATS.Client.Core;

namespace Broker.Compare.Load.Client;

/// <summary>
/// <see cref="RequestReplyWorkload"/> driven through NATS.Client.Core: clients await <c>RequestAsync</c> one request
/// at a time (the client's shared reply inbox), services <c>await foreach</c> over their subscription (in a queue group
/// when asked) and answer with <c>ReplyAsync</c>. Round trips are timed around each request. Units: round trips.
/// </summary>
internal sealed class CoreRequestReplyWorkload(int payloadSize, int clients, int services, bool queueGroup) : IWorkload
{
    public long CalibrationCount => 1_000;

    public long SmokeCount => 100;

    public bool HasLatency => true;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken) =>
        CoreRun.Run(run => RunAsync(server, count, subject, run), cancellationToken);

    private async Task<Measurement> RunAsync(NatsEndpoint server, long count, string subject, CoreRun run)
    {
        var cancellationToken = run.Token;
        var serviceSubject = subject + ".svc";
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var serving = new List<Task>();
        for (var i = 0; i < services; i++)
        {
            var connection = await run.ConnectAsync(server, $"service-{i}").ConfigureAwait(false);
            var subscription = await connection.SubscribeCoreAsync<byte[]>(serviceSubject, queueGroup ? "workers" : null, cancellationToken: cancellationToken).ConfigureAwait(false);
            await connection.PingAsync(cancellationToken).ConfigureAwait(false);
            serving.Add(Task.Run(() => ServeAsync(subscription, stop.Token), cancellationToken));
        }

        var requesters = new List<NatsConnection>();
        for (var i = 0; i < clients; i++)
        {
            requesters.Add(await run.ConnectAsync(server, $"requester-{i}").ConfigureAwait(false));
        }

        var payload = new byte[payloadSize];
        var start = Stopwatch.GetTimestamp();
        var latencies = await Task.WhenAll(requesters.Select(c => Task.Run(() => RequestAsync(c, serviceSubject, payload, count, cancellationToken), cancellationToken))).ConfigureAwait(false);
        var end = Stopwatch.GetTimestamp();
        await stop.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(serving).ConfigureAwait(false);
        var messages = count * clients;
        return new Measurement(messages, messages * payloadSize, WorkloadTiming.Between(start, end), LatencySummary.FromTicks([.. latencies.SelectMany(l => l)]));
    }

    private async Task<long[]> RequestAsync(NatsConnection connection, string subject, byte[] payload, long count, CancellationToken cancellationToken)
    {
        var latencies = new long[count];
        for (long i = 0; i < count; i++)
        {
            var sent = Stopwatch.GetTimestamp();
            var reply = await connection.RequestAsync<byte[], byte[]>(subject, payload, cancellationToken: cancellationToken).ConfigureAwait(false);
            latencies[i] = Stopwatch.GetTimestamp() - sent;
            if ((reply.Data?.Length ?? 0) != payloadSize)
            {
                throw new InvalidOperationException($"A reply of {reply.Data?.Length ?? 0} bytes arrived, {payloadSize} expected.");
            }
        }

        return latencies;
    }

    private static async Task ServeAsync(INatsSub<byte[]> subscription, CancellationToken stop)
    {
        try
        {
            await foreach (var request in subscription.Msgs.ReadAllAsync(stop).ConfigureAwait(false))
            {
                await request.ReplyAsync(request.Data, cancellationToken: stop).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // The clients are done.
        }
        finally
        {
            await subscription.DisposeAsync().ConfigureAwait(false);
        }
    }
}
