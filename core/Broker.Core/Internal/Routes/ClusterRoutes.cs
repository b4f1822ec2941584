using System.Net.Sockets;
using System.Net;
using System.Text.Json;
using System.Text;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// The broker as a cluster member (nats-server's routing in <c>route.go</c>): accepts routes on
/// <c>cluster.listen</c>, dials <c>cluster.routes</c> (<see cref="RouteDialer"/>), keeps one registered route per
/// member server (a second one is closed, as <c>addRoute</c> does), forwards a new member's INFO to the others so they
/// dial it (gossip, implicit routes), and tells clients the members' URLs (<see cref="ClusterUrls"/>). Every account's
/// interest (<see cref="Leaf.LeafInterest"/>) goes to every route. What it tells members and checks of them (route INFO,
/// advertise, credentials) is in ClusterRoutes.Info.cs.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The token source and the listener are disposed by StopAsync, which the broker's stop always runs.")]
internal sealed partial class ClusterRoutes
{
    private readonly Lock gate = new();
    private readonly Dictionary<string, RouteConnection> remotes = new(StringComparer.Ordinal);
    private readonly List<RouteConnection> all = [];
    private readonly List<Task> running = [];
    private readonly HashSet<string> self = new(StringComparer.OrdinalIgnoreCase);
    private readonly CancellationTokenSource stopping = new();
    private Socket? listener;
    private string name;
    private bool lameDuck;
    private (string Host, int Port)? advertised;

    private ClusterRoutes(BrokerCore server)
    {
        Server = server;
        Options = server.Options.Cluster;
        name = string.IsNullOrEmpty(Options.Name) ? Events.EventIds.Next() : Options.Name;
        IsNameDynamic = string.IsNullOrEmpty(Options.Name);
        Urls = new ClusterUrls(this);
        Permissions = Leaf.LeafPermissions.ForRoute(Leaf.LeafInfo.SubjectPermission.From(Options.Permissions?.Publish), Leaf.LeafInfo.SubjectPermission.From(Options.Permissions?.Subscribe));
        Opener = new RouteOpener(this, Options.Tls is { } tls ? LinkTls.ForRoutes(tls, Options.Routes.Select(r => new Uri(r.Trim()))) : null);

        // Every account's interest goes to every route: attached now, before any client subscribes.
        foreach (var account in server.Accounts.All)
        {
            Leaf.LeafInterest.Of(account);
        }
    }

    public BrokerCore Server { get; }

    public ClusterOptions Options { get; }

    /// <summary>The members' client URLs for the clients' INFO.</summary>
    public ClusterUrls Urls { get; }

    /// <summary>The routes' import and export permissions (<c>cluster.permissions</c>), or null.</summary>
    public Leaf.LeafPermissions? Permissions { get; }

    /// <summary>Opens routes over their sockets (TLS first when configured).</summary>
    public RouteOpener Opener { get; }

    /// <summary>The cluster's name now (a dynamic one may yield to a member's).</summary>
    public string Name
    {
        get
        {
            lock (gate)
            {
                return name;
            }
        }
    }

    /// <summary>Whether the name was made up at start and yields to a configured or larger one.</summary>
    public bool IsNameDynamic { get; private set; }

    /// <summary>The route port, once bound.</summary>
    public IPEndPoint? EndPoint { get; private set; }

    /// <summary>Whether accepted routes must authenticate.</summary>
    public bool AuthRequired => !string.IsNullOrEmpty(Options.Username);

    /// <summary>The routes registered now, one per member.</summary>
    public RouteConnection[] Routes
    {
        get
        {
            lock (gate)
            {
                return [.. remotes.Values.OrderBy(r => r.Id)];
            }
        }
    }

    /// <summary>The cluster of <paramref name="server"/>'s options, or null when routes are off.</summary>
    public static ClusterRoutes? Create(BrokerCore server) => server.Options.Cluster.IsEnabled ? new ClusterRoutes(server) : null;

    /// <summary>
    /// Binds the route port, dials the configured routes, then accepts; completes when each configured route was tried
    /// once (registered, refused or not reachable), at most <paramref name="firstAttempts"/> later, so clients that
    /// connect once the broker is ready find the cluster's URLs in their first INFO.
    /// </summary>
    public async Task StartAsync(TimeSpan firstAttempts)
    {
        _ = Urls.Own;
        var host = Options.Host;
        var address = host is "" or "0.0.0.0" ? IPAddress.Any : host is "::" ? IPAddress.IPv6Any : IPAddress.TryParse(host, out var ip) ? ip : Dns.GetHostAddresses(host)[0];
        var socket = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(address, Options.Port < 0 ? 0 : Options.Port));

        // Listening at once, as nats-server does: a member that hears of us through gossip as soon as our first dial
        // registers dials once (an implicit route is not tried again), and a refused dial would leave the two unrouted.
        socket.Listen(128);
        listener = socket;
        EndPoint = (IPEndPoint)socket.LocalEndPoint!;
        advertised = Advertised(Options.Advertise, EndPoint.Port);
        RouteLog.ClusterName(Server.Logger, Name);
        if (Options.Tls is { Insecure: true })
        {
            RouteLog.TlsInsecure(Server.Logger);
        }

        var dialers = new List<RouteDialer>();
        foreach (var route in Options.Routes)
        {
            var dialer = new RouteDialer(this, new Uri(route.Trim()), isExplicit: true);
            running.Add(Task.Run(() => dialer.RunAsync(stopping.Token)));
            dialers.Add(dialer);
        }

        // Members are dialled before we take their dials (250 ms at most; a dial meanwhile waits in the backlog), so a
        // member's periodic dial does not cross ours.
        await Task.WhenAny(Task.WhenAll(dialers.Select(d => d.FirstDial)), Task.Delay(TimeSpan.FromMilliseconds(250))).ConfigureAwait(false);
        RouteLog.Listening(Server.Logger, EndPoint.ToString());
        running.Add(Task.Run(AcceptLoopAsync));
        await Task.WhenAny(Task.WhenAll(dialers.Select(d => d.FirstAttempt)), Task.Delay(firstAttempts)).ConfigureAwait(false);
    }

    private async Task AcceptLoopAsync()
    {
        while (!stopping.IsCancellationRequested)
        {
            Socket socket;
            try
            {
                socket = await listener!.AcceptAsync(stopping.Token).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException or OperationCanceledException)
            {
                if (stopping.IsCancellationRequested)
                {
                    return;
                }

                continue;
            }

            socket.NoDelay = true;
            _ = AcceptAsync(socket);
        }
    }

    // The handshake (TLS first when configured) off the accept loop.
    private async Task AcceptAsync(Socket socket)
    {
        if (await Opener.OpenAsync(socket, null, isExplicit: false, stopping.Token).ConfigureAwait(false) is { } route)
        {
            Track(route);
            await route.RunAsync(dialled: false, stopping.Token).ConfigureAwait(false);
        }
    }

    /// <summary>Keeps a route until it closes, so a stop closes it.</summary>
    public void Track(RouteConnection route)
    {
        lock (gate)
        {
            all.Add(route);
        }
    }

    /// <summary>
    /// When the routes accepted so far registered or closed: dialling a member mid-way through its own dial to us could
    /// leave each side keeping a different connection and closing the other (both lost).
    /// </summary>
    public Task InboundHandshakes()
    {
        lock (gate)
        {
            return Task.WhenAll(all.Where(r => r.WasAccepted && !r.Settled.IsCompleted).Select(r => r.Settled));
        }
    }

    /// <summary>
    /// Whether a member's cluster name is ours. A dynamic name yields to a configured one or a larger one, and the
    /// other routes are then closed (nats-server's <c>processRouteConnect</c> and <c>processRouteInfo</c>).
    /// </summary>
    public bool AgreeOnName(string? other, bool otherDynamic, RouteConnection route)
    {
        if (string.IsNullOrEmpty(other))
        {
            return true;
        }

        RouteConnection[] others;
        lock (gate)
        {
            if (other == name)
            {
                return true;
            }

            if (!IsNameDynamic || (otherDynamic && string.CompareOrdinal(name, other) >= 0))
            {
                return false;
            }

            name = other;
            IsNameDynamic = otherDynamic;
            others = [.. all.Where(r => !ReferenceEquals(r, route))];
        }

        foreach (var r in others)
        {
            r.Close("Cluster Name Conflict");
        }

        return true;
    }

    /// <summary>Registers a route to a member; false when one to the same server is registered already.</summary>
    public bool Register(RouteConnection route, RouteInfo info)
    {
        lock (gate)
        {
            if (remotes.TryGetValue(info.ServerId, out var existing))
            {
                // addRoute: both members may keep the connection the other refuses, closing both; the survivor's
                // dialer dials again when it closes (RetryAfterClose).
                existing.RetryAfterClose = true;
                return false;
            }

            return !stopping.IsCancellationRequested && remotes.TryAdd(info.ServerId, route);
        }
    }

    /// <summary>A route was registered: the other members hear of it (gossip), the clients of its URLs.</summary>
    public void Registered(RouteConnection route, RouteInfo info)
    {
        RouteConnection[] others;
        lock (gate)
        {
            others = [.. remotes.Values.Where(r => !ReferenceEquals(r, route))];
        }

        if (others.Length > 0)
        {
            // forwardNewRouteInfoToKnownServers: the new member's INFO, with the address to dial it at.
            var ip = info.Ip ?? $"nats-route://{Host(route.RemoteEndPoint?.Address)}:{info.Port}/";
            var line = Encoding.UTF8.GetBytes("INFO " + JsonSerializer.Serialize(info.ForGossip(ip), RouteJsonContext.Default.RouteInfo) + "\r\n");
            foreach (var other in others)
            {
                other.SendProtocol(line);
            }
        }

        Urls.Changed();
    }

    private static string Host(IPAddress? address)
    {
        address = address is null ? IPAddress.Loopback : address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address;
        return address.AddressFamily == AddressFamily.InterNetworkV6 ? "[" + address + "]" : address.ToString();
    }

    /// <summary>A member told us of another one (nats-server's <c>processImplicitRoute</c>): dial it unless known.</summary>
    public void ProcessImplicitRoute(RouteInfo info)
    {
        if (info.ServerId == Server.ServerId || string.IsNullOrEmpty(info.Ip) || !Uri.TryCreate(info.Ip, UriKind.Absolute, out var url))
        {
            return;
        }

        lock (gate)
        {
            if (remotes.ContainsKey(info.ServerId) || stopping.IsCancellationRequested)
            {
                return;
            }

            // hasThisRouteConfigured: a member among cluster.routes is dialled by its own dialer.
            var hostPort = $"{info.Host}:{info.Port}";
            if (Options.Routes.Any(r => Uri.TryCreate(r.Trim(), UriKind.Absolute, out var u) && string.Equals($"{u.Host}:{u.Port}", hostPort, StringComparison.OrdinalIgnoreCase)))
            {
                return;
            }

            if (info.AuthRequired && AuthRequired)
            {
                url = new UriBuilder(url) { UserName = Uri.EscapeDataString(Options.Username!), Password = Uri.EscapeDataString(Options.Password ?? "") }.Uri;
            }

            running.Add(Task.Run(() => new RouteDialer(this, url, isExplicit: false).RunAsync(stopping.Token)));
        }
    }

    /// <summary>The route registered for a member server, if any.</summary>
    public RouteConnection? RouteTo(string serverId)
    {
        lock (gate)
        {
            return remotes.GetValueOrDefault(serverId);
        }
    }

    /// <summary>A dialled URL reached this broker itself: it is not dialled again.</summary>
    public void RouteToSelf(Uri? url)
    {
        if (url is not null)
        {
            lock (gate)
            {
                self.Add(url.Host + ":" + url.Port);
            }
        }
    }

    /// <summary>Whether <paramref name="url"/> is known to reach this broker itself.</summary>
    public bool IsSelf(Uri url)
    {
        lock (gate)
        {
            return self.Contains(url.Host + ":" + url.Port);
        }
    }

    /// <summary>A member announced lame duck mode: its client URLs leave our clients' INFO.</summary>
    public void RemoteEntersLameDuckMode(RouteConnection route) => Urls.Changed();

    /// <summary>A route closed: forgotten, and its URLs leave the clients' INFO.</summary>
    public void Closed(RouteConnection route)
    {
        bool changed;
        lock (gate)
        {
            all.Remove(route);
            changed = remotes.TryGetValue(route.RemoteId, out var registered) && ReferenceEquals(registered, route) && remotes.Remove(route.RemoteId);
        }

        if (changed)
        {
            Urls.Changed();
        }
    }

    /// <summary>Lame duck mode: the members hear it (INFO with <c>ldm</c>), as nats-server's <c>lameDuckMode</c> sends.</summary>
    public void EnterLameDuckMode()
    {
        RouteConnection[] routes;
        lock (gate)
        {
            lameDuck = true;
            routes = [.. remotes.Values];
        }

        var line = InfoLine(withNonce: false, lameDuckMode: true);
        foreach (var route in routes)
        {
            route.SendProtocol(line);
        }
    }

    /// <summary>Stops accepting and dialling and closes the routes.</summary>
    public async Task StopAsync()
    {
        await stopping.CancelAsync().ConfigureAwait(false);
        listener?.Dispose();
        RouteConnection[] routes;
        Task[] tasks;
        lock (gate)
        {
            routes = [.. all];
            tasks = [.. running];
        }

        foreach (var route in routes)
        {
            route.Close("Server Shutdown");
        }

        await Task.WhenAll(tasks).ConfigureAwait(false);
        await Task.WhenAll(routes.Select(r => r.Done)).ConfigureAwait(false);
        stopping.Dispose();
    }

    /// <summary>Whether the broker is stopping.</summary>
    public bool IsStopping => stopping.IsCancellationRequested;
}
