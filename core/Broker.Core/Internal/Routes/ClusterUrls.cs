using System.Net;
using System.Net.NetworkInformation;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// The client URLs of the cluster (nats-server's <c>clientConnectURLs</c>): the broker's own (its client listener's
/// host and port; every non-loopback address when it listens on all of them, as <c>getNonLocalIPsIfHostIsIPAny</c>),
/// then those of the members' routes (their INFO's <c>connect_urls</c>, without members in lame duck mode), unless
/// <c>cluster.no_advertise</c>. A change goes to the clients that understand asynchronous INFO (CONNECT
/// <c>protocol</c> 1), as <c>sendAsyncInfoToClients</c> does.
/// </summary>
internal sealed class ClusterUrls(ClusterRoutes cluster)
{
    private readonly Lock gate = new();
    private string[]? own;
    private string[] advertised = [];

    /// <summary>The broker's own client URLs (<c>host:port</c>).</summary>
    public IList<string> Own
    {
        get
        {
            lock (gate)
            {
                return own ??= OwnUrls();
            }
        }
    }

    /// <summary>The URLs the clients' INFO carries in <c>connect_urls</c>.</summary>
    public IList<string> Advertised
    {
        get
        {
            lock (gate)
            {
                return advertised.Length == 0 ? Own : advertised;
            }
        }
    }

    /// <summary>The routes or their lame duck state changed: the URLs are computed again and clients told of a change.</summary>
    public void Changed()
    {
        var urls = new List<string>(Own);
        if (!cluster.Options.NoAdvertise)
        {
            foreach (var route in cluster.Routes)
            {
                if (route.Remote is { LameDuckMode: false, ConnectUrls: { } remoteUrls } && !route.RemoteInLameDuckMode)
                {
                    urls.AddRange(remoteUrls.Where(u => !urls.Contains(u)));
                }
            }
        }

        lock (gate)
        {
            if (urls.SequenceEqual(advertised))
            {
                return;
            }

            advertised = [.. urls];
        }

        if (cluster.Options.NoAdvertise || cluster.IsStopping)
        {
            return;
        }

        foreach (var client in cluster.Server.Clients.Values.OfType<NatsClient>())
        {
            client.SendAsyncInfo();
        }
    }

    private string[] OwnUrls()
    {
        var (host, port) = cluster.Server.ClientHostPort;
        if (port <= 0)
        {
            return [];
        }

        if (host is not ("" or "0.0.0.0" or "::"))
        {
            return [Join(host, port)];
        }

        var addresses = new List<string>();
        try
        {
            foreach (var network in NetworkInterface.GetAllNetworkInterfaces())
            {
                if (network.OperationalStatus != OperationalStatus.Up)
                {
                    continue;
                }

                foreach (var unicast in network.GetIPProperties().UnicastAddresses)
                {
                    var address = unicast.Address;
                    if (IPAddress.IsLoopback(address) || address.IsIPv6LinkLocal)
                    {
                        continue;
                    }

                    addresses.Add(Join(address.ToString(), port));
                }
            }
        }
        catch (NetworkInformationException)
        {
        }

        return addresses.Count > 0 ? [.. addresses] : [Join("127.0.0.1", port)];
    }

    private static string Join(string host, int port) => (host.Contains(':', StringComparison.Ordinal) ? "[" + host + "]" : host) + ":" + port.ToString(System.Globalization.CultureInfo.InvariantCulture);
}
