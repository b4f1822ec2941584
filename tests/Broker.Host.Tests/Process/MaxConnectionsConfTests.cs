using System.Net;
using Broker.TestKit;

namespace Broker.Host.Tests.Process;

/// <summary>
/// <c>max_connections</c> in a configuration file, given to the real host and to nats-server 2.9.10: 0 is the default
/// (65536), a negative value is no limit, a positive one refuses the connections beyond it; /varz and the clients'
/// answers are the same on both.
/// </summary>
public sealed class MaxConnectionsConfTests : IDisposable
{
    private readonly string conf = Path.Combine(Path.GetTempPath(), $"broker-maxconn-{Guid.NewGuid():N}.conf");

    public void Dispose() => File.Delete(conf);

    [Theory(Timeout = 90_000)]
    [InlineData(0)]
    [InlineData(-1)]
    [InlineData(2)]
    public async Task The_limit_reads_as_nats_server_reads_it(int maxConnections)
    {
        var referenceMonitor = Ports.GetFreePort();
        await using var reference = await ReferenceServer.StartAsync($"max_connections: {maxConnections}\nhttp: \"127.0.0.1:{referenceMonitor}\"\n");
        File.WriteAllText(conf, $"max_connections: {maxConnections}\nhttp: \"127.0.0.1:-1\"\n");
        await using var ours = await HostProcess.StartReadyAsync(["-c", conf]);

        var expected = await ConnectThreeAsync(reference.EndPoint, referenceMonitor);
        var actual = await ConnectThreeAsync(ours.EndPoint("client"), ours.EndPoint("monitor").Port);

        Assert.Equal(maxConnections == 0 ? 65536 : maxConnections, expected.MaxConnections);
        Assert.Equal(expected, actual);
    }

    /// <summary>/varz max_connections and what three clients, one after the other, hear after CONNECT and PING.</summary>
    private static async Task<(int MaxConnections, string Answers)> ConnectThreeAsync(IPEndPoint endPoint, int monitorPort)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var varz = await Harness.GetJsonAsync(http, new Uri($"http://127.0.0.1:{monitorPort}"), "/varz");
        var clients = new List<RawClient>();
        var answers = new List<string>();
        try
        {
            for (var i = 0; i < 3; i++)
            {
                var client = await RawClient.ConnectAsync(endPoint);
                clients.Add(client);
                await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
                answers.Add((await client.PingAndCollectAsync()).ToString());
            }
        }
        finally
        {
            foreach (var client in clients)
            {
                await client.DisposeAsync();
            }
        }

        return (varz.GetProperty("max_connections").GetInt32(), string.Join(" / ", answers));
    }
}
