using System.IO.Pipelines;
using System.Net.Sockets;
using System.Net;
using Broker.Abstractions;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Leaf;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// Turns a route's socket into a <see cref="RouteConnection"/> over its started transport. With <c>cluster.tls</c> the
/// TLS handshake comes first, before either side sends anything (nats-server 2.9.10's <c>createRoute</c>): the dialling
/// member is the client (<see cref="LinkTls.AuthenticateAsync"/>, the route URL's host checked), the accepting one the
/// server requiring the member's certificate (<see cref="LinkTls.AuthenticateAsServerAsync(Stream, CancellationToken)"/>). A failed handshake is
/// logged as nats-server's <c>TLS route handshake error: ...</c> and the socket closed; the dialler tries again.
/// </summary>
internal sealed class RouteOpener(ClusterRoutes cluster, LinkTls? tls)
{
    private readonly TransportSettings settings = new() { MaxPendingOutputBytes = cluster.Server.Options.MaxPending, WriteDeadline = cluster.Server.Options.WriteDeadline };

    /// <summary>Whether routes speak TLS (the route INFO's <c>tls_required</c> and <c>tls_verify</c>).</summary>
    public bool TlsRequired => tls is not null;

    /// <summary>The route over <paramref name="socket"/>, which it then owns; null when the TLS handshake failed (logged, socket closed).</summary>
    public async Task<RouteConnection?> OpenAsync(Socket socket, Uri? url, bool isExplicit, CancellationToken stopping)
    {
        var id = cluster.Server.NextClientId();
        var remote = socket.RemoteEndPoint is IPEndPoint { Address.IsIPv4MappedToIPv6: true } mapped ? new IPEndPoint(mapped.Address.MapToIPv4(), mapped.Port) : socket.RemoteEndPoint as IPEndPoint;
        if (tls is null)
        {
            var plain = new SocketConnection(socket, settings, owner: null, PipeScheduler.ThreadPool);
            plain.Start();
            return new RouteConnection(cluster, plain, remote, id, url, isExplicit);
        }

        var local = socket.LocalEndPoint;
        var stream = new NetworkStream(socket, ownsSocket: true);
        try
        {
            var ssl = url is null
                ? await tls.AuthenticateAsServerAsync(stream, stopping).ConfigureAwait(false)
                : await tls.AuthenticateAsync(stream, url, stopping).ConfigureAwait(false);
            var secured = new LeafStreamConnection(ssl, settings, local, remote, []);
            secured.Start();
            return new RouteConnection(cluster, secured, remote, id, url, isExplicit);
        }
        catch (LinkException ex)
        {
            var name = remote?.ToString() ?? "?";
            RouteLog.TlsHandshakeFailed(cluster.Server.Logger, name, id, ex.Message);
            RouteLog.Closed(cluster.Server.Logger, name, id, "TLS Handshake Failure");
            return null;
        }
        catch (OperationCanceledException)
        {
            await stream.DisposeAsync().ConfigureAwait(false);
            return null;
        }
    }
}
