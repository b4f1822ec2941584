using System.Net;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal;

/// <summary>The client registry and the INFO each new client receives.</summary>
internal sealed partial class BrokerCore
{
    private ServerInfo infoTemplate = new();

    /// <summary>Sets what INFO advertises once the client listener is bound.</summary>
    public void ConfigureInfo(string host, int port, string brokerVersion, bool jetStream = false)
    {
        infoTemplate = new ServerInfo
        {
            JetStream = jetStream ? true : null,
            ServerId = ServerId,
            ServerName = ServerName,
            Go = ".NET " + Environment.Version,
            Host = host,
            Port = port,
            BrokerVersion = brokerVersion,
        };
        RefreshInfo();
    }

    /// <summary>Updates what INFO says about settings a reload can change.</summary>
    public void RefreshInfo()
    {
        var info = infoTemplate.Clone();
        var options = Options;
        info.Headers = !options.NoHeaderSupport;
        info.AuthRequired = Authenticator.AuthRequired ? true : null;
        info.MaxPayload = options.MaxPayload;
        infoTemplate = info;
    }

    public byte[] CreateClientInfo(NatsClient client, bool lameDuckMode = false, string? nonce = null)
    {
        var info = infoTemplate.Clone();
        info.ClientId = client.Id;
        info.Nonce = nonce;
        info.LameDuckMode = lameDuckMode ? true : null;
        info.ClientIp = client.RemoteEndPoint?.Address is { } address
            ? (address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address).ToString()
            : null;
        client.DescribeTransport(info);
        return info.ToProtocolLine();
    }

    // Makes an adapter connection's limit check and registration one step (nats-server checks under its lock).
    private readonly Lock admission = new();

    /// <summary>
    /// Registers an adapter's connection unless <c>max_connections</c> are connected; checked and registered as one
    /// step, so connections arriving together cannot all pass the check.
    /// </summary>
    public bool TryRegister(ClientBase client)
    {
        lock (admission)
        {
            if (Clients.Count >= Options.MaxConnections)
            {
                return false;
            }

            Register(client);
            return true;
        }
    }

    public void Register(ClientBase client)
    {
        Clients[client.Id] = client;
        Interlocked.Increment(ref Statistics.TotalConnections);
    }

    public void Unregister(ClientBase client) => Clients.TryRemove(client.Id, out _);

    public static string FormatEndPoint(EndPoint? endPoint) => endPoint?.ToString() ?? "?";
}
