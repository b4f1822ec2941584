using System.Buffers;
using System.Buffers.Text;
using System.Text;
using System.Text.Json;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The spoke's side of a solicited link's handshake (nats-server's <c>processLeafnodeInfo</c> and
/// <c>sendLeafConnect</c>): the hub's first INFO (checked to come from a leaf port, its nonce kept), our CONNECT
/// without <c>lang</c>, then the connect-info INFO with our permissions, each in time; later INFOs update the hub's
/// URLs and permissions. <see cref="LeafHandshake"/> is the hub's side.
/// </summary>
internal sealed class LeafSpokeHandshake
{
    // nats-server's connectProcessTimeout: the connect-info INFO must follow our CONNECT within it.
    private static readonly TimeSpan ConnectProcessTimeout = TimeSpan.FromSeconds(2);

    private readonly LeafConnection link;
    private readonly LeafRemote remote;
    private readonly LeafTransport transport;
    private readonly Uri url;
    private byte[] nonce = [];
    private int infoReceived;

    // Our JetStream domain's API (`$JS.<domain>.API.>`) when the hub serves another domain: kept from leaving (set at the first INFO).
    private string? domainDeny;

    public LeafSpokeHandshake(LeafConnection link, LeafRemote remote, LeafTransport transport, Uri url)
    {
        this.link = link;
        this.remote = remote;
        this.transport = transport;
        this.url = url;
    }

    private BrokerCore Server => link.Server;

    /// <summary>Closes the link when the hub's first INFO does not come in time.</summary>
    public void Start() => _ = WatchAsync(LeafTransportOpener.FirstInfoTimeout, "Timeout waiting for the hub's INFO", requireInfo: true);

    // The hub's first INFO, then the connect-info INFO, must come in time (nats-server: WrongPort / Stale Leaf Node Connection).
    private async Task WatchAsync(TimeSpan timeout, string reason, bool requireInfo)
    {
        await Task.Delay(timeout).ConfigureAwait(false);
        if (requireInfo ? Volatile.Read(ref infoReceived) == 0 : !link.IsEstablished)
        {
            link.Close(reason);
        }
    }

    /// <summary>An INFO from the hub: the first starts our CONNECT, the connect-info one finishes the handshake.</summary>
    public void ProcessInfo(ReadOnlySpan<byte> json)
    {
        var info = JsonSerializer.Deserialize(json, LeafJsonContext.Default.LeafInfo) ?? throw new LeafProtocolException("empty INFO");
        var first = Interlocked.Exchange(ref infoReceived, 1) == 0;
        if (first)
        {
            // A leaf port's INFO has a client id and the leaf URLs; anything else is another kind of port.
            if (info.ClientId == 0 || info.LeafNodeUrls is null)
            {
                LeafLog.Refused(Server.Logger, link.Redacted, "Attempted To Connect To Wrong Port");
                link.Close("Wrong Port");
                return;
            }

            nonce = Encoding.UTF8.GetBytes(info.Nonce ?? string.Empty);
            link.HubInfo(info.Headers && !Server.Options.NoHeaderSupport, info.ServerName ?? info.ServerId ?? string.Empty);
            domainDeny = LeafPermissions.DomainDeny(Server.JetStreamDomain, info.Domain, link.Account.IsSystem);
            if (domainDeny is not null)
            {
                LeafLog.DomainDeny(Server.Logger, domainDeny, link.Account.Name);
                link.LinkPermissions = LeafPermissions.Create(remote.Options, link.Account.IsSystem, domainDeny: domainDeny);
            }
        }

        remote.AddDiscovered(info);

        if (info.Import is not null || info.Export is not null)
        {
            link.LinkPermissions = LeafPermissions.Create(remote.Options, link.Account.IsSystem, info.Import, info.Export, domainDeny);
        }

        if (info.RemoteAccount is { } remoteAccount)
        {
            link.RemoteAccount = remoteAccount;
        }

        if (first)
        {
            SendConnect();
            if (info.InfoOnConnect)
            {
                _ = WatchAsync(ConnectProcessTimeout, "Stale Leaf Node Connection", requireInfo: false);
                return;
            }
        }

        if ((first || info.ConnectInfo) && !link.IsEstablished)
        {
            link.Establish();
        }
    }

    private void SendConnect()
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
        link.SendProtocol(line.WrittenSpan);
    }

    // nats-server's jetStreamConfigured for the link's account: its own JetStream limits, or $G while no other account is configured.
    private bool HasJetStream()
        => Server.JetStreamEnabled && !link.Account.IsSystem
            && (link.Account.JetStream is not null || (link.Account.IsGlobal && Server.Accounts.All.All(a => a.IsGlobal || a.IsSystem)));
}
