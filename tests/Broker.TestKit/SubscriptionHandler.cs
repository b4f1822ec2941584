using NATS.Client.Core;

namespace Broker.TestKit;

/// <summary>
/// A subscription served by a handler on its own task, as an application runs a service with NATS.Client.Core
/// (<c>await foreach</c> over the subscription's messages). Disposing it unsubscribes and waits for the loop; a
/// handler exception is rethrown there, so it fails the test.
/// </summary>
public sealed class SubscriptionHandler : IAsyncDisposable
{
    private readonly INatsSub<byte[]> subscription;
    private readonly Task loop;

    private SubscriptionHandler(INatsSub<byte[]> subscription, Func<NatsMsg<byte[]>, ValueTask> handler)
    {
        this.subscription = subscription;
        loop = Task.Run(async () =>
        {
            await foreach (var message in subscription.Msgs.ReadAllAsync().ConfigureAwait(false))
            {
                await handler(message).ConfigureAwait(false);
            }
        });
    }

    /// <summary>
    /// Subscribes <paramref name="connection"/> to <paramref name="subject"/> (in <paramref name="queueGroup"/> when
    /// given) and runs <paramref name="handler"/> for each message; returns once the server has the subscription.
    /// </summary>
    public static async Task<SubscriptionHandler> StartAsync(
        NatsConnection connection, string subject, Func<NatsMsg<byte[]>, ValueTask> handler, string? queueGroup = null)
    {
        ArgumentNullException.ThrowIfNull(connection);
        var subscription = await connection.SubscribeCoreAsync<byte[]>(subject, queueGroup).ConfigureAwait(false);
        await connection.PingAsync().ConfigureAwait(false);
        return new SubscriptionHandler(subscription, handler);
    }

    /// <summary>A responder: replies to each request with what <paramref name="answer"/> makes of its payload.</summary>
    public static Task<SubscriptionHandler> RespondAsync(
        NatsConnection connection, string subject, Func<byte[], byte[]> answer, string? queueGroup = null) =>
        StartAsync(connection, subject, message => message.ReplyAsync(answer(message.Data ?? [])), queueGroup);

    public async ValueTask DisposeAsync()
    {
        await subscription.DisposeAsync().ConfigureAwait(false);
        await loop.ConfigureAwait(false);
    }
}
