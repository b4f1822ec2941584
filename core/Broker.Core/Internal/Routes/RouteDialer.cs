using System.Net.Sockets;
using Broker.Core.Internal.Leaf;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// Dials one member (nats-server's <c>connectToRoute</c> and <c>reConnectToRoute</c>). An explicit route
/// (<c>cluster.routes</c>) is dialled until the broker stops: a second a try, and again after its route closes; while
/// another route to the same server is registered (both sides dialled each other and that one won), it waits for that
/// one to close instead, as nats-server hands the solicited URL to the surviving route. An implicit route (learnt
/// through gossip) is tried <c>connect_retries</c> more times and, once connected, dialled again only when its route
/// lost to a duplicate that closed too, or closed after we refused a duplicate of it (the member may have kept that one).
/// </summary>
internal sealed class RouteDialer(ClusterRoutes cluster, Uri url, bool isExplicit)
{
    // nats-server's DEFAULT_ROUTE_CONNECT, DEFAULT_ROUTE_RECONNECT and DEFAULT_ROUTE_DIAL.
    private static readonly TimeSpan ConnectDelay = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan ReconnectDelay = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan DialTimeout = TimeSpan.FromSeconds(1);

    private readonly TaskCompletionSource firstAttempt = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource firstDial = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Completes when the first dial failed, or its route was registered or closed (or the dialer stopped).</summary>
    public Task FirstAttempt => firstAttempt.Task;

    /// <summary>Completes when the first dial connected or failed (or the dialer stopped).</summary>
    public Task FirstDial => firstDial.Task;

    public async Task RunAsync(CancellationToken stopping)
    {
        try
        {
            await DialLoopAsync(stopping).ConfigureAwait(false);
        }
        finally
        {
            firstDial.TrySetResult();
            firstAttempt.TrySetResult();
        }
    }

    private async Task DialLoopAsync(CancellationToken stopping)
    {
        var attempts = 0;
        var connections = 0;
        while (!stopping.IsCancellationRequested && !cluster.IsSelf(url))
        {
            // A member dialling us now is let finish first (ClusterRoutes.InboundHandshakes), at most a dial timeout.
            if (cluster.InboundHandshakes() is { IsCompleted: false } inbound)
            {
                await Task.WhenAny(inbound, Task.Delay(DialTimeout, stopping)).ConfigureAwait(false);
                if (stopping.IsCancellationRequested)
                {
                    return;
                }
            }

            Socket socket;
            try
            {
                socket = await LeafRemote.DialAsync(url, 6222, DialTimeout, stopping).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is SocketException or OperationCanceledException or IOException)
            {
                if (stopping.IsCancellationRequested)
                {
                    return;
                }

                attempts++;
                firstDial.TrySetResult();
                firstAttempt.TrySetResult();
                if (attempts == 1 || attempts % 60 == 0)
                {
                    RouteLog.ConnectFailed(cluster.Server.Logger, attempts, ex.Message);
                }

                if (!isExplicit && attempts > cluster.Options.ConnectRetries)
                {
                    return;
                }

                if (!await LeafRemote.WaitAsync(ConnectDelay, stopping).ConfigureAwait(false))
                {
                    return;
                }

                continue;
            }

            if (await cluster.Opener.OpenAsync(socket, url, isExplicit, stopping).ConfigureAwait(false) is not { } route)
            {
                // The TLS handshake failed (logged): dialled again as after a closed route (reConnectToRoute).
                attempts++;
                firstAttempt.TrySetResult();
                if (stopping.IsCancellationRequested || (!isExplicit && attempts > cluster.Options.ConnectRetries)
                    || !await LeafRemote.WaitAsync(TimeSpan.FromMilliseconds(Random.Shared.Next(100)) + ReconnectDelay, stopping).ConfigureAwait(false))
                {
                    return;
                }

                continue;
            }

            attempts = 0;
            connections++;
            cluster.Track(route);
            firstDial.TrySetResult();
            _ = route.Settled.ContinueWith(static (_, state) => ((TaskCompletionSource)state!).TrySetResult(), firstAttempt, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
            await route.RunAsync(dialled: true, stopping).ConfigureAwait(false);
            var remoteId = route.RemoteId;
            if (remoteId.Length > 0 && cluster.RouteTo(remoteId) is { } survivor && !ReferenceEquals(survivor, route))
            {
                // A duplicate: the other route carries the member; take over when it goes.
                await Task.WhenAny(survivor.Done, Task.Delay(Timeout.Infinite, stopping)).ConfigureAwait(false);
            }
            else if (!isExplicit && (route.IsRegistered || connections > 1) && !route.RetryAfterClose)
            {
                // An implicit route that served and closed is not dialled again (the member, if back, dials its seeds),
                // unless a duplicate was refused while it served: then the member may have closed it in favour of
                // that duplicate, which we closed (nats-server's route.retry).
                return;
            }

            // reConnectToRoute: a random delay below 100 ms so two members dialling each other do not collide again.
            var delay = TimeSpan.FromMilliseconds(Random.Shared.Next(100)) + (isExplicit ? ReconnectDelay : TimeSpan.Zero);
            if (!await LeafRemote.WaitAsync(delay, stopping).ConfigureAwait(false))
            {
                return;
            }
        }
    }
}
