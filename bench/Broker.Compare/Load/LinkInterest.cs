using NATS.Client.Core;
using Broker.Compare.Load.Client;

namespace Broker.Compare.Load;

/// <summary>
/// Waits until subscriptions made on one server of a linked pair reach the other: a watcher subscribes to
/// <c>&lt;subject&gt;.link</c> on the subscribers' server, after the workload's subscribers (each confirmed by a PONG),
/// and a probe publishes to it from the publishers' server every 20 ms until the watcher receives one. A server
/// sends its interest over the link in the order it took the subscriptions, so once the watcher's arrived the
/// subscribers' had too: the first PUB of the run is not dropped for want of interest. No-op when both are one server.
/// </summary>
internal static class LinkInterest
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan ProbeInterval = TimeSpan.FromMilliseconds(20);

    /// <summary>Blocks until the interest crossed (see the class); throws <see cref="TimeoutException"/> after 30 s.</summary>
    public static void Wait(NatsEndpoint server, string subject, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(server);
        if (server.SubscriberServer is null)
        {
            return;
        }

        CoreRun.Run(run => WaitAsync(server, subject, run), cancellationToken);
    }

    /// <summary>As <see cref="Wait"/>, for the NATS.Client.Core workloads; completes with <see langword="true"/> at once for one server.</summary>
    public static async Task<bool> WaitAsync(NatsEndpoint server, string subject, CoreRun run)
    {
        ArgumentNullException.ThrowIfNull(server);
        ArgumentNullException.ThrowIfNull(run);
        if (server.SubscriberServer is null)
        {
            return true;
        }

        var cancellationToken = run.Token;
        var linkSubject = subject + ".link";
        await using var watcher = await run.ConnectAsync(server.Subscribers, "link-watch").ConfigureAwait(false);
        await using var subscription = await watcher.SubscribeCoreAsync<byte[]>(linkSubject, cancellationToken: cancellationToken).ConfigureAwait(false);
        await watcher.PingAsync(cancellationToken).ConfigureAwait(false);
        await using var probe = await run.ConnectAsync(server with { SubscriberServer = null }, "link-probe").ConfigureAwait(false);
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(Timeout);
        while (true)
        {
            using var tick = CancellationTokenSource.CreateLinkedTokenSource(deadline.Token);
            tick.CancelAfter(ProbeInterval);
            try
            {
                await probe.PublishAsync(linkSubject, Array.Empty<byte>(), cancellationToken: deadline.Token).ConfigureAwait(false);
                if (await subscription.Msgs.WaitToReadAsync(tick.Token).ConfigureAwait(false))
                {
                    return true;
                }
            }
            catch (OperationCanceledException) when (!deadline.IsCancellationRequested)
            {
                // No probe came through yet: publish another.
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw new TimeoutException($"Interest in {linkSubject} made on {server.Subscribers} did not reach {server.Address} within {Timeout.TotalSeconds:0} s");
            }
        }
    }
}
