using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// One route to another cluster member (nats-server's <c>ROUTER</c> connection), solicited (we dialled: CONNECT then
/// INFO) or accepted (INFO first, the member's CONNECT checked against <c>cluster.authorization</c>). Once the member's
/// INFO came, the route is registered with <see cref="ClusterRoutes"/> (a second route to the same server is closed as
/// nats-server closes it) and each account's interest goes out as RS+; the member's interest and messages land in the
/// account through one <see cref="RouteAccountLink"/> per account. Reading is in RouteConnection.Read.cs, writing in
/// RouteConnection.Output.cs.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The transport is disposed when RunAsync ends; the route has no other owner.")]
internal sealed partial class RouteConnection
{
    private readonly ClusterRoutes cluster;
    private readonly TransportConnection connection;
    private readonly ConnectionOutput output;
    private readonly TaskCompletionSource done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource settled = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Dictionary<Account, RouteAccountLink> links = [];
    private readonly RouteAccountLink owner;
    private readonly Dictionary<string, RouteAccountLink>.AlternateLookup<ReadOnlySpan<char>> linksByName;
    private int closed;
    private volatile bool registered;
    private volatile bool connectReceived;
    private RouteInfo? remote;
    private readonly Leaf.LinkKeepAlive keepAlive;

    /// <summary>A route over <paramref name="connection"/>, started (in clear text or after TLS: <see cref="RouteOpener"/>).</summary>
    public RouteConnection(ClusterRoutes cluster, TransportConnection connection, IPEndPoint? remote, ulong id, Uri? url, bool isExplicit)
    {
        this.cluster = cluster;
        this.connection = connection;
        Server = cluster.Server;
        Url = url;
        WasAccepted = url is null;
        IsExplicit = isExplicit;
        Id = id;
        output = new ConnectionOutput(connection, connection.Transport.Output);
        RemoteEndPoint = remote;
        foreach (var account in Server.Accounts.All)
        {
            links[account] = new RouteAccountLink(this, account);
        }

        owner = links[Server.Accounts.Global];
        linksByName = links.ToDictionary(l => l.Key.Name, l => l.Value, StringComparer.Ordinal).GetAlternateLookup<ReadOnlySpan<char>>();
        keepAlive = new Leaf.LinkKeepAlive(Server, () => IsClosed, () => SendProtocol("PING\r\n"u8), reason => Close(reason));
    }

    public BrokerCore Server { get; }

    /// <summary>The cluster's import and export permissions, or null (<c>cluster.permissions</c>).</summary>
    public Leaf.LeafPermissions? Permissions => cluster.Permissions;

    /// <summary>The route's id (<c>rid</c> in /routez and logs).</summary>
    public ulong Id { get; }

    /// <summary>The URL dialled, for a solicited route; null for an accepted one until the member's INFO names it.</summary>
    public Uri? Url { get; private set; }

    /// <summary>Whether we dialled the member.</summary>
    public bool DidSolicit => solicited;

    /// <summary>Whether the member dialled us (the route came through our route port).</summary>
    public bool WasAccepted { get; }

    /// <summary>Whether the URL dialled is one of <c>cluster.routes</c>.</summary>
    public bool IsExplicit { get; }

    /// <summary>
    /// Set when a second connection to the same member was refused as a duplicate while this one was registered
    /// (nats-server's <c>route.retry</c>): the member may have kept that one and closed this, leaving neither, so when
    /// this route closes its dialer dials again even for an implicit route.
    /// </summary>
    public bool RetryAfterClose
    {
        get => Volatile.Read(ref retryAfterClose);
        set => Volatile.Write(ref retryAfterClose, value);
    }

    private bool retryAfterClose;

    private bool solicited;

    public IPEndPoint? RemoteEndPoint { get; }

    public DateTimeOffset StartedAt { get; } = DateTimeOffset.UtcNow;

    /// <summary>The member's INFO, once received.</summary>
    public RouteInfo? Remote => Volatile.Read(ref remote);

    /// <summary>The member's server id ("" until its INFO came).</summary>
    public string RemoteId => Remote?.ServerId ?? string.Empty;

    /// <summary>Whether the member takes headers (both sides support them).</summary>
    public bool SupportsHeaders { get; private set; }

    public bool IsClosed => Volatile.Read(ref closed) != 0;

    /// <summary>Whether the member announced lame duck mode (an INFO with <c>ldm</c>).</summary>
    public bool RemoteInLameDuckMode { get; private set; }

    public bool IsRegistered => registered;

    /// <summary>Completes when the route has closed.</summary>
    public Task Done => done.Task;

    /// <summary>
    /// Completes when the route was registered on both sides (for a dialled route: the member answered the PING sent
    /// after our INFO) or closed, whichever came first.
    /// </summary>
    public Task Settled => settled.Task;

    public long RoundTripNanoseconds => keepAlive.RoundTripNanoseconds;

    /// <summary>The links of the accounts, for /routez.</summary>
    public IEnumerable<RouteAccountLink> Links => links.Values;

    private string Name => RemoteEndPoint?.ToString() ?? "?";

    /// <summary>Runs the route until it closes: sends the handshake, reads, and closes on a fault or end of input.</summary>
    public async Task RunAsync(bool dialled, CancellationToken stopping)
    {
        solicited = dialled;
        RouteLog.Created(Server.Logger, Name, Id);
        using var registration = stopping.Register(static state => ((RouteConnection)state!).Close("Server Shutdown"), this);
        if (dialled)
        {
            SendConnect();
        }

        SendProtocol(cluster.InfoLine(withNonce: true));
        if (dialled)
        {
            // Not nats-server's: its PONG tells that the member has read our INFO and registered us (Settled).
            SendProtocol("PING\r\n"u8);
        }

        if (!dialled && cluster.AuthRequired)
        {
            _ = AuthTimeoutAsync();
        }

        _ = keepAlive.RunAsync();
        try
        {
            await ReadLoopAsync(connection.Transport.Input).ConfigureAwait(false);
            Close("Client Closed");
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException or InvalidOperationException or OperationCanceledException)
        {
            Close("Read Error: " + ex.Message);
        }
        catch (RouteProtocolException ex)
        {
            Close("Protocol Error: " + ex.Message, $"-ERR '{ex.Message}'\r\n");
        }
        catch (JsonException ex)
        {
            Close("Protocol Error: " + ex.Message);
        }

        await done.Task.ConfigureAwait(false);
        await connection.DisposeAsync().ConfigureAwait(false);
    }

    private void SendConnect()
    {
        var connect = new RouteConnect
        {
            Name = Server.ServerId,
            Cluster = cluster.Name,
            Dynamic = cluster.IsNameDynamic,
            Headers = !Server.Options.NoHeaderSupport,
            TlsRequired = cluster.Opener.TlsRequired,
        };
        var user = cluster.UserFor(Url!);
        if (user is { } credentials)
        {
            connect.User = credentials.User;
            connect.Password = credentials.Password;
        }

        SendProtocol(Encoding.UTF8.GetBytes("CONNECT " + JsonSerializer.Serialize(connect, RouteJsonContext.Default.RouteConnect) + "\r\n"));
    }

    private async Task AuthTimeoutAsync()
    {
        await Task.Delay(Server.Options.Cluster.AuthTimeout).ConfigureAwait(false);
        if (!connectReceived && !IsClosed)
        {
            Refuse("Authentication Timeout", "Authentication Timeout");
        }
    }

    private void ProcessPong()
    {
        keepAlive.Pong();
        if (registered)
        {
            settled.TrySetResult();
        }
    }

    /// <summary>The member's INFO: the first registers the route; later ones tell of new members or lame duck mode.</summary>
    private void ProcessInfo(ReadOnlySpan<byte> json)
    {
        var info = JsonSerializer.Deserialize(json, RouteJsonContext.Default.RouteInfo) ?? throw new RouteProtocolException("empty INFO");
        if (Remote is { } known)
        {
            if (info.ServerId != known.ServerId)
            {
                cluster.ProcessImplicitRoute(info);
            }
            else if (info.LameDuckMode)
            {
                RemoteInLameDuckMode = true;
                cluster.RemoteEntersLameDuckMode(this);
            }

            return;
        }

        if (info.ServerId == Server.ServerId)
        {
            cluster.RouteToSelf(Url);
            Close("Duplicate Route");
            return;
        }

        if (!cluster.AgreeOnName(info.Cluster, info.Dynamic, this))
        {
            Close("Cluster Name Conflict");
            return;
        }

        if (!solicited && !string.IsNullOrEmpty(info.ServerName) && info.ServerName == Server.ServerName)
        {
            Refuse($"Remote server has a duplicate name: \"{info.ServerName}\"", null);
            return;
        }

        SupportsHeaders = info.Headers && !Server.Options.NoHeaderSupport;
        if (Url is null && info.Host is { Length: > 0 } host)
        {
            Url = new Uri($"nats-route://{(host.Contains(':', StringComparison.Ordinal) ? "[" + host + "]" : host)}:{info.Port}/");
        }

        Volatile.Write(ref remote, info);
        if (!cluster.Register(this, info))
        {
            Close("Duplicate Route");
            return;
        }

        registered = true;
        RouteLog.Registered(Server.Logger, Name, Id, info.ServerId, info.ServerName ?? string.Empty);
        foreach (var (account, link) in links)
        {
            Leaf.LeafInterest.Of(account).Attach(link);
        }

        cluster.Registered(this, info);
        if (!solicited)
        {
            settled.TrySetResult();
        }
    }

    /// <summary>
    /// The link of an account, or null for an account this broker does not have (its interest and messages are
    /// dropped). Looked up by the name's characters, without a string per message.
    /// </summary>
    private RouteAccountLink? LinkOf(ReadOnlySpan<byte> accountName)
    {
        if (accountName.Length > 256)
        {
            return null;
        }

        Span<char> name = stackalloc char[256];
        return Encoding.UTF8.TryGetChars(accountName, name, out var length) && linksByName.TryGetValue(name[..length], out var link) ? link : null;
    }

    /// <summary>Logs <paramref name="message"/>, sends it as -ERR when given, and closes.</summary>
    private void Refuse(string message, string? error)
    {
        RouteLog.Refused(Server.Logger, Name, Id, message);
        Close(message, error is null ? null : $"-ERR '{error}'\r\n");
    }

    /// <summary>
    /// Closes the route once: the member's interest leaves every account, the cluster forgets it (and an explicit route
    /// dials again). With <paramref name="lastLine"/> (an -ERR) the output is flushed before the socket goes.
    /// </summary>
    public void Close(string reason, string? lastLine = null)
    {
        if (Interlocked.Exchange(ref closed, 1) != 0)
        {
            return;
        }

        if (registered)
        {
            foreach (var (account, link) in links)
            {
                Leaf.LeafInterest.Of(account).Detach(link);
            }
        }

        foreach (var link in links.Values)
        {
            link.Drop();
        }

        lock (output.Gate)
        {
            output.Complete(lastLine is null ? default : Encoding.UTF8.GetBytes(lastLine));
        }

        RouteLog.Closed(Server.Logger, Name, Id, reason);
        if (lastLine is null)
        {
            connection.Abort(reason);
        }
        else
        {
            connection.Transport.Input.CancelPendingRead();
            _ = AbortLaterAsync(reason);
        }

        cluster.Closed(this);
        settled.TrySetResult();
        done.TrySetResult();
    }

    private async Task AbortLaterAsync(string reason)
    {
        await Task.Delay(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
        connection.Abort(reason);
    }
}

/// <summary>The member sent something this broker cannot parse: the route closes.</summary>
internal sealed class RouteProtocolException(string message) : Exception(message);
