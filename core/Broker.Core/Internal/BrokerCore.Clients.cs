using System.Net;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal;

/// <summary>The client registry, admission under <c>max_connections</c>, and the INFO each new client receives.</summary>
internal sealed partial class BrokerCore
{
    private ServerInfo infoTemplate = new();

    /// <summary>Sets what INFO advertises once the client listener is bound.</summary>
    public void ConfigureInfo(string host, int port, string brokerVersion, bool jetStream = false, string? jetStreamDomain = null)
    {
        infoTemplate = new ServerInfo
        {
            JetStream = jetStream ? true : null,
            Domain = string.IsNullOrEmpty(jetStreamDomain) ? null : jetStreamDomain,
            ServerId = ServerId,
            ServerName = ServerName,
            XKey = CurveKey.GetPublicKey(),
            Go = ".NET " + Environment.Version,
            Host = host,
            Port = port,
            BrokerVersion = brokerVersion,
        };
        RefreshInfo();
    }

    /// <summary>The client listener's host and port as INFO gives them (the cluster's own <c>connect_urls</c>).</summary>
    public (string Host, int Port) ClientHostPort => (infoTemplate.Host, infoTemplate.Port);

    /// <summary>Whether INFO advertises JetStream (the <c>jetstream</c> of the system account's server info).</summary>
    public bool JetStreamEnabled => infoTemplate.JetStream == true;

    /// <summary>The JetStream domain served (<c>jetstream { domain }</c>), null without one or without JetStream.</summary>
    public string? JetStreamDomain => infoTemplate.Domain;

    /// <summary>Updates what INFO says about settings a reload can change.</summary>
    public void RefreshInfo()
    {
        var info = infoTemplate.Clone();
        var options = Options;
        info.Headers = !options.NoHeaderSupport;
        // As nats-server's createClient: with no_auth_user a client need not authenticate, so INFO does not ask it to.
        info.AuthRequired = Authenticator.AuthRequired && string.IsNullOrEmpty(options.Authorization.NoAuthUser) ? true : null;
        info.MaxPayload = options.MaxPayload;
        infoTemplate = info;
    }

    /// <summary>The INFO line for <paramref name="client"/>, in this thread's scratch buffer (<see cref="ServerInfo.WriteProtocolLine"/>).</summary>
    public ReadOnlySpan<byte> CreateClientInfo(NatsClient client, bool lameDuckMode = false, string? nonce = null)
    {
        var info = infoTemplate.Clone();
        info.ClientId = client.Id;
        info.Nonce = nonce;
        info.LameDuckMode = lameDuckMode ? true : null;
        if (Routes is { } routes)
        {
            info.Cluster = routes.Name;
            info.ConnectUrls = routes.Options.NoAdvertise ? null : routes.Urls.Advertised;
        }

        // As nats-server's generateClientInfoJSON: the payload limit of the client's own account.
        info.MaxPayload = ClientLimits.MaxPayload(Options, client.Account, client.JwtUser?.MaxPayload ?? -1);
        info.ClientIp = client.RemoteEndPoint?.Address is { } address
            ? (address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address).ToString()
            : null;
        client.DescribeTransport(info);
        return info.WriteProtocolLine();
    }

    private readonly ConnectionAdmission admission = new();

    /// <summary>The places <c>max_connections</c> allows and how many are taken.</summary>
    public ConnectionAdmission Admission => admission;

    /// <summary>
    /// Admits a connection unless <c>max_connections</c> are connected, and registers it: the place is taken in one
    /// atomic step (see <see cref="ConnectionAdmission"/>). Every connection from outside the process comes through
    /// here (NATS and WebSocket clients once INFO is sent, adapters' connections once authenticated); the place is
    /// given back by <see cref="Unregister"/>.
    /// </summary>
    public bool TryAdmit(ClientBase client)
    {
        if (!admission.TryTake(Options.MaxConnections))
        {
            return false;
        }

        clients.Set(client.Id, client);
        return true;
    }

    /// <summary>
    /// Removes a closed client from the registry and gives its place back, in the server and in its account. Only
    /// admitted clients are in the registry, and only one removal can succeed, so the place is given back exactly once
    /// however often a closing path calls this, and never for a refused client.
    /// </summary>
    public void Unregister(ClientBase client)
    {
        // Its account's place too (once, however often this runs; nothing when it was never admitted there).
        client.ReleaseAccount();
        if (clients.TryRemove(client.Id, out _))
        {
            admission.Release();
        }
    }

    /// <summary>
    /// After a reload lowered <c>max_connections</c> below the connections open, closes the newest ones beyond it
    /// with <c>maximum connections exceeded</c>, so the oldest keep their place. nats-server closes as many, picked
    /// in its client map's (random) order.
    /// </summary>
    /// <returns>How many were closed.</returns>
    public int CloseBeyondLimit()
    {
        var open = Clients.Values.OfType<IClientConnection>().ToList();
        var maxConnections = Options.MaxConnections;
        if (!ConnectionAdmission.Exceeds(open.Count, maxConnections))
        {
            return 0;
        }

        var excess = open.Count - ConnectionAdmission.Effective(maxConnections);
        foreach (var client in open.OrderByDescending(c => c.Id).Take(excess))
        {
            client.CloseForMaxConnections();
        }

        return excess;
    }

    public static string FormatEndPoint(EndPoint? endPoint) => endPoint?.ToString() ?? "?";
}
