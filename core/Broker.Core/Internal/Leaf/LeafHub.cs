using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using Broker.Abstractions;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The broker as a hub (nats-server's <c>startLeafNodeAcceptLoop</c>): listens on <c>leafnodes.listen</c>, runs each
/// spoke's handshake (<see cref="LeafHandshake"/>) and then a <see cref="LeafConnection"/> in the account the spoke's
/// user binds, and keeps the accepted links. A spoke that connects again under the same name, cluster and account
/// replaces its older link (<c>addLeafNodeConnection</c>), which is told <c>Duplicate Remote LeafNode Connection</c>.
/// </summary>
internal sealed class LeafHub
{
    private readonly BrokerCore server;
    private readonly Func<Account, LeafInterest> interestFor;
    private readonly LeafHubTls? tls;
    private readonly Lock gate = new();
    private readonly List<Task> running = [];
    private LeafConnection[] links = [];
    private Socket? listener;
    private LeafHubInfo info = new();

    public LeafHub(BrokerCore server, Func<Account, LeafInterest> interestFor)
    {
        this.server = server;
        this.interestFor = interestFor;
        tls = server.Options.LeafNodes.Hub.Tls is { } tlsOptions ? new LeafHubTls(tlsOptions) : null;
    }

    /// <summary>The bound listen address, once started.</summary>
    public IPEndPoint? EndPoint { get; private set; }

    /// <summary>The accepted links, established or still finishing their handshake.</summary>
    public LeafConnection[] Links
    {
        get
        {
            lock (gate)
            {
                return links;
            }
        }
    }

    /// <summary>Binds the listener (port -1: a free one) and starts accepting spokes until <paramref name="stopping"/>.</summary>
    public void Start(CancellationToken stopping)
    {
        var options = server.Options.LeafNodes.Hub;
        var host = string.IsNullOrEmpty(options.Host) ? "0.0.0.0" : options.Host;
        var address = IPAddress.TryParse(host, out var parsed) ? parsed : Dns.GetHostAddresses(host)[0];
        var socket = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            socket.Bind(new IPEndPoint(address, options.Port < 0 ? 0 : options.Port));
            socket.Listen(128);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        listener = socket;
        EndPoint = (IPEndPoint)socket.LocalEndPoint!;
        info = CreateInfo(host, EndPoint.Port);
        LeafLog.HubListening(server.Logger, host + ":" + EndPoint.Port);
        var accepting = Task.Run(() => AcceptLoopAsync(socket, stopping), CancellationToken.None);
        lock (gate)
        {
            running.Add(accepting);
        }
    }

    // nats-server's leafNodeInfo: the advertised address, else the listen host (a wildcard one resolved to an address of
    // this machine) and port, is both "ip" and the leafnode_urls a spoke may reconnect to.
    private LeafHubInfo CreateInfo(string host, int port)
    {
        var options = server.Options;
        var advertise = options.LeafNodes.Hub.Advertise;
        string ip;
        if (!string.IsNullOrEmpty(advertise))
        {
            ip = advertise.Contains(':', StringComparison.Ordinal) ? advertise : advertise + ":" + port;
        }
        else
        {
            var shown = host is "0.0.0.0" or "::" ? NonLocalAddress() ?? host : host;
            ip = IPAddress.TryParse(shown, out var parsed) ? new IPEndPoint(parsed, port).ToString() : shown + ":" + port;
        }

        return new LeafHubInfo
        {
            ServerId = server.ServerId,
            ServerName = server.ServerName,
            Host = host,
            Port = port,
            Headers = !options.NoHeaderSupport,
            TlsRequired = tls is not null,
            TlsVerify = tls is { Verify: true },
            MaxPayload = options.MaxPayload,
            JetStream = server.JetStreamEnabled,
            Domain = server.JetStreamDomain,
            Ip = ip,
            LeafNodeUrls = [ip],
        };
    }

    private static string? NonLocalAddress() =>
        NetworkInterface.GetAllNetworkInterfaces()
            .Where(n => n.OperationalStatus == OperationalStatus.Up)
            .SelectMany(n => n.GetIPProperties().UnicastAddresses)
            .Select(u => u.Address)
            .FirstOrDefault(a => a.AddressFamily == AddressFamily.InterNetwork && !IPAddress.IsLoopback(a))?.ToString();

    private async Task AcceptLoopAsync(Socket socket, CancellationToken stopping)
    {
        while (!stopping.IsCancellationRequested)
        {
            Socket accepted;
            try
            {
                accepted = await socket.AcceptAsync(stopping).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException or OperationCanceledException)
            {
                if (stopping.IsCancellationRequested || listener is null)
                {
                    return;
                }

                continue;
            }

            accepted.NoDelay = true;
            var serving = Task.Run(() => ServeAsync(accepted, stopping), CancellationToken.None);
            lock (gate)
            {
                running.RemoveAll(t => t.IsCompleted);
                running.Add(serving);
            }
        }
    }

    private async Task ServeAsync(Socket socket, CancellationToken stopping)
    {
        LeafAccepted? accepted;
        try
        {
            var settings = new TransportSettings { MaxPendingOutputBytes = server.Options.MaxPending, WriteDeadline = server.Options.WriteDeadline };
            accepted = await LeafHandshake.AcceptAsync(server, info, tls, socket, settings, stopping).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException or OperationCanceledException or IOException)
        {
            socket.Dispose();
            return;
        }

        if (accepted is null)
        {
            return;
        }

        var link = new LeafConnection(server, this, interestFor(accepted.Spoke.Account), accepted.Transport, accepted.Spoke);
        await link.RunAsync(stopping).ConfigureAwait(false);
    }

    /// <summary>A link finished its handshake: it is kept, and an older link of the same spoke is closed.</summary>
    public void Added(LeafConnection link, LeafSpoke spoke)
    {
        LeafConnection? older = null;
        lock (gate)
        {
            if (spoke.Name.Length > 0)
            {
                older = Array.Find(links, l => l.Spoke is { } s && s.Name == spoke.Name && s.Cluster == spoke.Cluster && ReferenceEquals(s.Account, spoke.Account));
            }

            links = [.. links, link];
        }

        if (older is not null)
        {
            older.Close(DuplicateConnection, $"-ERR '{DuplicateConnection}'\r\n");
            LeafLog.ReplacingSpoke(server.Logger, link.Redacted, spoke.Name);
        }
    }

    private const string DuplicateConnection = "Duplicate Remote LeafNode Connection";

    /// <summary>A link closed.</summary>
    public void Removed(LeafConnection link)
    {
        lock (gate)
        {
            links = Array.FindAll(links, l => !ReferenceEquals(l, link));
        }
    }

    /// <summary>Stops accepting and closes the accepted links.</summary>
    public async Task StopAsync()
    {
        var socket = Interlocked.Exchange(ref listener, null);
        socket?.Dispose();
        foreach (var link in Links)
        {
            link.Close("Server Shutdown");
        }

        Task[] waiting;
        lock (gate)
        {
            waiting = [.. running];
        }

        await Task.WhenAll(waiting).ConfigureAwait(false);
    }
}
