using System.Net.Sockets;
using Broker.Core.Internal.Clients;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// One configured remote (nats-server's <c>leafNodeCfg</c>): dials its URLs in turn (shuffled unless
/// <c>no_randomize</c>; those the hub announces in <c>leafnode_urls</c> are added), runs a <see cref="LeafConnection"/>
/// until it closes, waits the reconnect interval (or the longer delay a loop asked for) and dials again, until the
/// broker stops. The broker keeps serving its own clients meanwhile.
/// </summary>
internal sealed class LeafRemote
{
    private static readonly TimeSpan DialTimeout = TimeSpan.FromSeconds(1);

    private readonly BrokerCore server;
    private readonly LeafInterest interest;
    private readonly Lock gate = new();
    private readonly List<Uri> urls;
    private readonly (string User, string? Password)? savedUser;
    private readonly LeafTransportOpener opener;
    private readonly string discoveredScheme;
    private Uri? current;
    private TimeSpan connectDelay;
    private volatile LeafConnection? link;

    public LeafRemote(BrokerCore server, LeafRemoteOptions options, LeafInterest interest)
    {
        this.server = server;
        this.interest = interest;
        Options = options;
        urls = [.. options.Urls.Select(u => new Uri(u.Trim()))];
        if (!options.NoRandomize)
        {
            Random.Shared.Shuffle(System.Runtime.InteropServices.CollectionsMarshal.AsSpan(urls));
        }

        // nats-server saveUserPassword: the first URL's credentials also serve announced bare URLs.
        savedUser = urls.Where(u => u.UserInfo.Length > 0).Select(Split).FirstOrDefault();
        var settings = new Abstractions.TransportSettings { MaxPendingOutputBytes = server.Options.MaxPending, WriteDeadline = server.Options.WriteDeadline };
        opener = new LeafTransportOpener(LinkTls.Create(options, urls), settings);

        // The remote's URLs are all WebSocket or none (LeafRemoteOptions.Validate); TLS is kept for announced ones.
        discoveredScheme = urls[0].Scheme is not ("ws" or "wss") ? "nats-leaf://"
            : options.Tls is not null || urls.Any(u => u.Scheme == "wss") ? "wss://" : "ws://";
    }

    public LeafRemoteOptions Options { get; }

    /// <summary>The link while one is connected (handshake finished), else null.</summary>
    public LeafConnection? Link => link;

    /// <summary>How many times the link was established (for tests and monitoring).</summary>
    public int Connections;

    /// <summary>Dials and serves links until <paramref name="stopping"/> is cancelled.</summary>
    public async Task RunAsync(CancellationToken stopping)
    {
        var attempts = 0;
        while (!stopping.IsCancellationRequested)
        {
            TimeSpan delay;
            lock (gate)
            {
                delay = connectDelay;
                connectDelay = TimeSpan.Zero;
            }

            if (delay > TimeSpan.Zero && !await WaitAsync(delay, stopping).ConfigureAwait(false))
            {
                return;
            }

            var url = PickNextUrl();
            Socket socket;
            try
            {
                socket = await DialAsync(url, 7422, DialTimeout, stopping).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is SocketException or OperationCanceledException or IOException)
            {
                if (stopping.IsCancellationRequested)
                {
                    return;
                }

                attempts++;
                if (attempts == 1 || attempts % 60 == 0)
                {
                    LeafLog.ConnectFailed(server.Logger, url.Host + ":" + url.Port, attempts, ex.Message);
                }

                if (!await WaitAsync(server.Options.LeafNodes.ReconnectInterval, stopping).ConfigureAwait(false))
                {
                    return;
                }

                continue;
            }

            attempts = 0;
            LeafTransport transport;
            try
            {
                transport = await opener.OpenAsync(socket, url, Options.WebSocketCompression, stopping).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is LinkException or IOException or SocketException or OperationCanceledException)
            {
                socket.Dispose();
                if (stopping.IsCancellationRequested)
                {
                    return;
                }

                Failed(url, ex);
                if (!await WaitAsync(server.Options.LeafNodes.ReconnectInterval, stopping).ConfigureAwait(false))
                {
                    return;
                }

                continue;
            }

            var connection = new LeafConnection(server, this, interest, transport, url);
            await connection.RunAsync(stopping).ConfigureAwait(false);
            link = null;
            if (!await WaitAsync(server.Options.LeafNodes.ReconnectInterval, stopping).ConfigureAwait(false))
            {
                return;
            }
        }
    }

    // nats-server logs a failed handshake every time (Errorf), then reconnects after the interval.
    private void Failed(Uri url, Exception ex)
    {
        var redacted = LeafConnection.RedactedUrl(url);
        switch ((ex as LinkException)?.Stage)
        {
            case LinkStage.Tls:
                LeafLog.TlsFailed(server.Logger, redacted, ex.Message);
                break;
            case LinkStage.WebSocket:
                LeafLog.WebSocketFailed(server.Logger, redacted, ex.Message);
                break;
            default:
                LeafLog.Closed(server.Logger, redacted, ex is LinkException ? ex.Message : "Read Error: " + ex.Message);
                break;
        }
    }

    /// <summary>Dials <paramref name="url"/> (<paramref name="defaultPort"/> when it names none) within <paramref name="dialTimeout"/>; a route dials the same way.</summary>
    internal static async Task<Socket> DialAsync(Uri url, int defaultPort, TimeSpan dialTimeout, CancellationToken stopping)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
            timeout.CancelAfter(dialTimeout);
            await socket.ConnectAsync(url.Host, url.Port < 0 ? defaultPort : url.Port, timeout.Token).ConfigureAwait(false);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>Waits <paramref name="delay"/>; false when <paramref name="stopping"/> ended it.</summary>
    internal static async Task<bool> WaitAsync(TimeSpan delay, CancellationToken stopping)
    {
        try
        {
            await Task.Delay(delay, stopping).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    // nats-server pickNextURL: the URL just used moves to the end when it is first, then the first is taken.
    private Uri PickNextUrl()
    {
        lock (gate)
        {
            if (current is not null && urls.Count > 1 && SameHost(urls[0], current))
            {
                var first = urls[0];
                urls.RemoveAt(0);
                urls.Add(first);
            }

            current = urls[0];
            return current;
        }
    }

    /// <summary>
    /// Adds the URLs a hub announced (<c>host:port</c>) that are not known yet: its <c>ws_connect_urls</c> for a
    /// WebSocket remote (whose URLs are all <c>ws://</c> or <c>wss://</c>), else its <c>leafnode_urls</c>, as
    /// nats-server's <c>updateLeafNodeURLs</c>.
    /// </summary>
    public void AddDiscovered(LeafInfo info)
    {
        if ((discoveredScheme is "nats-leaf://" ? info.LeafNodeUrls : info.WebSocketConnectUrls) is not { Count: > 0 } hostPorts)
        {
            return;
        }

        lock (gate)
        {
            foreach (var hostPort in hostPorts)
            {
                if (Uri.TryCreate(discoveredScheme + hostPort, UriKind.Absolute, out var uri) && !urls.Any(u => SameHost(u, uri)))
                {
                    urls.Add(uri);
                }
            }
        }
    }

    /// <summary>The user and password for <paramref name="url"/>: its own, else those of the configured URLs.</summary>
    public (string User, string? Password)? UserFor(Uri url) => url.UserInfo.Length > 0 ? Split(url) : savedUser;

    /// <summary>Makes the next dial wait <paramref name="delay"/> (a loop was detected).</summary>
    public void DelayNextConnect(TimeSpan delay)
    {
        lock (gate)
        {
            connectDelay = delay;
        }
    }

    /// <summary>A link finished its handshake.</summary>
    public void Connected(LeafConnection connection)
    {
        link = connection;
        Interlocked.Increment(ref Connections);
    }

    private static bool SameHost(Uri a, Uri b) => string.Equals(a.Host, b.Host, StringComparison.OrdinalIgnoreCase) && a.Port == b.Port;

    private static (string User, string? Password) Split(Uri url)
    {
        var info = url.UserInfo;
        var colon = info.IndexOf(':', StringComparison.Ordinal);
        return colon < 0
            ? (Uri.UnescapeDataString(info), null)
            : (Uri.UnescapeDataString(info[..colon]), Uri.UnescapeDataString(info[(colon + 1)..]));
    }
}
