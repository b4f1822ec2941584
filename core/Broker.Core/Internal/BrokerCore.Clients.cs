using System.Net;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal;

/// <summary>The client registry and the INFO each new client receives.</summary>
internal sealed partial class BrokerCore
{
    private ServerInfo infoTemplate = new();

    /// <summary>Sets what INFO advertises once the client listener is bound.</summary>
    public void ConfigureInfo(string host, int port, string brokerVersion)
    {
        var options = Options;
        infoTemplate = new ServerInfo
        {
            ServerId = ServerId,
            ServerName = ServerName,
            Go = ".NET " + Environment.Version,
            Host = host,
            Port = port,
            Headers = !options.NoHeaderSupport,
            AuthRequired = Authenticator.AuthRequired ? true : null,
            MaxPayload = options.MaxPayload,
            BrokerVersion = brokerVersion,
        };
    }

    public byte[] CreateClientInfo(NatsClient client)
    {
        var info = infoTemplate.Clone();
        info.ClientId = client.Id;
        info.ClientIp = client.RemoteEndPoint?.Address is { } address
            ? (address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address).ToString()
            : null;
        client.DescribeTransport(info);
        return info.ToProtocolLine();
    }

    public void Register(ClientBase client)
    {
        Clients[client.Id] = client;
        Interlocked.Increment(ref Statistics.TotalConnections);
    }

    public void Unregister(ClientBase client) => Clients.TryRemove(client.Id, out _);

    public static string FormatEndPoint(EndPoint? endPoint) => endPoint?.ToString() ?? "?";
}
