using System.Buffers;
using System.Buffers.Text;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// One leaf node link (nats-server's <c>LEAF</c> client). Solicited (a <see cref="LeafRemote"/>, the broker the
/// spoke): the handshake (the hub's INFO, our CONNECT without <c>lang</c>, the hub's connect-info INFO with our
/// permissions, then our interest). Accepted (<see cref="LeafHub"/>, the broker the hub): the handshake is done by
/// <see cref="LeafHandshake"/>, the link sends the connect-info INFO and its interest. Either way the other side's
/// interest becomes subscriptions of this client in the bound account (one per <c>subject</c> or
/// <c>subject queue</c> key), its messages are published into the account, ours are sent as LMSG/HMSG.
/// Reading is in LeafConnection.Read.cs, writing in LeafConnection.Output.cs.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The transport is disposed when RunAsync ends; the link has no other owner.")]
internal sealed partial class LeafConnection : LinkClient, IInterestLink
{
    // nats-server's connectProcessTimeout: the connect-info INFO must follow our CONNECT within it.
    private static readonly TimeSpan ConnectProcessTimeout = TimeSpan.FromSeconds(2);

    private readonly LeafRemote? remote;
    private readonly LeafHub? hub;
    private readonly LeafInterest interest;
    private readonly Uri url;
    private readonly TransportConnection connection;
    private readonly LeafTransport transport;
    private readonly ConnectionOutput output;
    private readonly TaskCompletionSource done = new(TaskCreationOptions.RunContinuationsAsynchronously);

    // The hub's queue weights by key, for /leafz; changed by the read loop only.
    private readonly Dictionary<string, int> weights = new(StringComparer.Ordinal);
    private readonly Lock weightsGate = new();

    private volatile LeafPermissions permissions;
    private int closed;
    private volatile bool established;
    private byte[] nonce = [];

    public LeafConnection(BrokerCore server, LeafRemote remote, LeafInterest interest, LeafTransport transport, Uri url)
        : this(server, remote, interest, transport, url, LeafPermissions.Create(remote.Options, interest.Account.IsSystem))
    {
    }

    /// <summary>A link a spoke opened to this broker as its hub, after <see cref="LeafHandshake"/>.</summary>
    public LeafConnection(BrokerCore server, LeafHub hub, LeafInterest interest, LeafTransport transport, LeafSpoke spoke)
        : this(server, null, interest, transport, new Uri("nats-leaf://" + transport.Connection.RemoteEndPoint), spoke.Permissions)
    {
        this.hub = hub;
        Spoke = spoke;
        SupportsHeaders = spoke.Headers;
        HubName = spoke.Name;
    }

    private LeafConnection(BrokerCore server, LeafRemote? remote, LeafInterest interest, LeafTransport transport, Uri url, LeafPermissions permissions)
        : base(server, ClientKind.Leaf, interest.Account)
    {
        this.remote = remote;
        this.interest = interest;
        this.url = url;
        Echo = false;
        this.permissions = permissions;
        this.transport = transport;
        connection = transport.Connection;
        output = new ConnectionOutput(connection, connection.Transport.Output);
        RemoteEndPoint = connection.RemoteEndPoint as IPEndPoint;
    }

    /// <summary>The hub's address.</summary>
    public IPEndPoint? RemoteEndPoint { get; }

    /// <summary>The other side's server name: the hub's (its id when it sends none), or the spoke's for an accepted link.</summary>
    public string HubName { get; private set; } = string.Empty;

    /// <summary>The account the hub bound the link to, when it said (<c>remote_account</c>).</summary>
    public string? RemoteAccount { get; private set; }

    /// <summary>The spoke of a link this broker accepted as the hub; null for a solicited link.</summary>
    public LeafSpoke? Spoke { get; }

    /// <summary>Whether the link was accepted (the broker is the hub) rather than solicited.</summary>
    public bool IsAccepted => remote is null;

    /// <summary>Whether the handshake finished and interest flows.</summary>
    public bool IsEstablished => established;

    public override bool IsClosed => Volatile.Read(ref closed) != 0;

    /// <summary>Completes when the link has closed.</summary>
    public Task Done => done.Task;

    /// <summary>The other side's interest now: keys with their weights (1 for plain subscriptions).</summary>
    public KeyValuePair<string, int>[] RemoteInterest()
    {
        lock (weightsGate)
        {
            return [.. weights];
        }
    }

    /// <summary>Runs the link until it closes: starts the transport, reads, and closes on a fault or end of input.</summary>
    public async Task RunAsync(CancellationToken stopping)
    {
        using var registration = stopping.Register(static state => ((LeafConnection)state!).Close("Server Shutdown"), this);
        if (Spoke is { } spoke)
        {
            // processLeafNodeConnect: the connect-info INFO, then the interest.
            SendProtocol(spoke.ConnectInfo);
            hub!.Added(this, spoke);
            Establish();
        }
        else
        {
            _ = WatchHandshakeAsync(LeafTransportOpener.FirstInfoTimeout, "Timeout waiting for the hub's INFO", requireInfo: true);
        }

        try
        {
            await ReadLoopAsync(connection.Transport.Input).ConfigureAwait(false);
            Close("Client Closed");
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException or InvalidOperationException or OperationCanceledException)
        {
            Close("Read Error: " + ex.Message);
        }
        catch (LeafProtocolException ex)
        {
            Close("Protocol Error: " + ex.Message);
        }
        catch (JsonException ex)
        {
            Close("Protocol Error: " + ex.Message);
        }

        await done.Task.ConfigureAwait(false);
        await connection.DisposeAsync().ConfigureAwait(false);
    }

    private LinkKeepAlive? keepAlive;

    private void ProcessPong() => keepAlive?.Pong();

    protected internal override long RoundTripNanoseconds => keepAlive?.RoundTripNanoseconds ?? 0;

    // The hub's first INFO, then the connect-info INFO, must come in time (nats-server: WrongPort / Stale Leaf Node Connection).
    private async Task WatchHandshakeAsync(TimeSpan timeout, string reason, bool requireInfo)
    {
        await Task.Delay(timeout).ConfigureAwait(false);
        if (requireInfo ? nonceReceived == 0 : !established)
        {
            Close(reason);
        }
    }

    private int nonceReceived;

    // Our JetStream domain's API (`$JS.<domain>.API.>`) when the hub serves another domain: kept from leaving (set at the first INFO).
    private string? domainDeny;

    /// <summary>An INFO from the hub: the first starts our CONNECT, the connect-info one finishes the handshake.</summary>
    private void ProcessInfo(ReadOnlySpan<byte> json)
    {
        if (remote is null)
        {
            // A 2.9 spoke sends no INFO (2.10+ ones only to negotiate compression, which the hub does not offer).
            return;
        }

        var info = JsonSerializer.Deserialize(json, LeafJsonContext.Default.LeafInfo) ?? throw new LeafProtocolException("empty INFO");
        var first = Interlocked.Exchange(ref nonceReceived, 1) == 0;
        if (first)
        {
            // A leaf port's INFO has a client id and the leaf URLs; anything else is another kind of port.
            if (info.ClientId == 0 || info.LeafNodeUrls is null)
            {
                LeafLog.Refused(Server.Logger, Redacted, "Attempted To Connect To Wrong Port");
                Close("Wrong Port");
                return;
            }

            nonce = Encoding.UTF8.GetBytes(info.Nonce ?? string.Empty);
            SupportsHeaders = info.Headers && !Server.Options.NoHeaderSupport;
            HubName = info.ServerName ?? info.ServerId ?? string.Empty;
            domainDeny = LeafPermissions.DomainDeny(Server.JetStreamDomain, info.Domain, Account.IsSystem);
            if (domainDeny is not null)
            {
                LeafLog.DomainDeny(Server.Logger, domainDeny, Account.Name);
                permissions = LeafPermissions.Create(remote.Options, Account.IsSystem, domainDeny: domainDeny);
            }
        }

        remote.AddDiscovered(info);

        if (info.Import is not null || info.Export is not null)
        {
            permissions = LeafPermissions.Create(remote.Options, Account.IsSystem, info.Import, info.Export, domainDeny);
        }

        if (info.RemoteAccount is { } remoteAccount)
        {
            RemoteAccount = remoteAccount;
        }

        if (first)
        {
            SendConnect(remote);
            if (info.InfoOnConnect)
            {
                _ = WatchHandshakeAsync(ConnectProcessTimeout, "Stale Leaf Node Connection", requireInfo: false);
                return;
            }
        }

        if ((first || info.ConnectInfo) && !established)
        {
            Establish();
        }
    }

    private void SendConnect(LeafRemote remote)
    {
        var options = remote.Options;
        var connect = new LeafConnect
        {
            Version = Protocol.ServerInfo.CompatibleServerVersion,
            ServerId = Server.ServerId,
            Name = Server.ServerName,
            Domain = Server.JetStreamDomain,
            Headers = !Server.Options.NoHeaderSupport,
            JetStream = HasJetStream(),

            // As nats-server: the TLS upgrade after INFO, not TLS under WebSocket frames.
            TlsRequired = transport.Tls && !transport.WebSocket,
            DenyPublish = options.DenyImports.Count > 0 ? options.DenyImports : null,
        };
        if (options.Credentials is { } path)
        {
            var (jwt, seed) = Jwt.CredsFile.Parse(File.ReadAllText(path));
            using var key = NATS.NKeys.KeyPair.FromSeed(seed);
            var signature = new byte[64];
            key.Sign(nonce, signature);
            connect.Jwt = jwt;
            connect.Signature = Base64Url.EncodeToString(signature);
        }
        else if (remote.UserFor(url) is { } user)
        {
            connect.User = user.User;
            connect.Password = user.Password;
        }

        var line = new ArrayBufferWriter<byte>();
        line.Write("CONNECT "u8);
        using (var writer = new Utf8JsonWriter(line))
        {
            JsonSerializer.Serialize(writer, connect, LeafJsonContext.Default.LeafConnect);
        }

        line.Write("\r\n"u8);
        SendProtocol(line.WrittenSpan);
    }

    // nats-server's jetStreamConfigured for the link's account: its own JetStream limits, or $G while no other account is configured.
    private bool HasJetStream()
        => Server.JetStreamEnabled && !Account.IsSystem
            && (Account.JetStream is not null || (Account.IsGlobal && Server.Accounts.All.All(a => a.IsGlobal || a.IsSystem)));

    // The connect-info INFO came (or the hub sends none): bind, then send our interest, as leafNodeFinishConnectProcess.
    private void Establish()
    {
        established = true;
        interest.Attach(this);
        keepAlive = new LinkKeepAlive(Server, () => IsClosed, () => SendProtocol("PING\r\n"u8), reason => Close(reason));
        _ = keepAlive.RunAsync();
        LeafLog.Connected(Server.Logger, Account.Name, Redacted, HubName);
        remote?.Connected(this);
    }

    /// <summary>
    /// Closes the link once: its subscriptions leave the account and the remote reconnects. With
    /// <paramref name="lastLine"/> (an -ERR) the output is sent before the socket goes, as nats-server flushes its error
    /// before closing; the socket is aborted a moment later at the latest.
    /// </summary>
    public void Close(string reason, string? lastLine = null)
    {
        if (Interlocked.Exchange(ref closed, 1) != 0)
        {
            return;
        }

        established = false;
        interest.Detach(this);
        hub?.Removed(this);
        RemoveAllSubscriptions();
        lock (output.Gate)
        {
            output.Complete(lastLine is null ? default : Encoding.UTF8.GetBytes(lastLine));
        }

        LeafLog.Closed(Server.Logger, Redacted, reason);
        if (lastLine is null)
        {
            connection.Abort(reason);
        }
        else
        {
            connection.Transport.Input.CancelPendingRead();
            _ = AbortLaterAsync(reason);
        }

        done.TrySetResult();
    }

    private async Task AbortLaterAsync(string reason)
    {
        await Task.Delay(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
        connection.Abort(reason);
    }

    /// <summary>The URL without credentials, for logs and /leafz.</summary>
    public string Redacted => RedactedUrl(url);

    /// <summary><paramref name="url"/> without credentials.</summary>
    public static string RedactedUrl(Uri url) => url.GetLeftPart(UriPartial.Authority).Replace(url.UserInfo + "@", string.Empty, StringComparison.Ordinal);
}

/// <summary>The hub sent something this spoke cannot parse: the link closes.</summary>
internal sealed class LeafProtocolException(string message) : Exception(message);
