using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.TestKit;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// Our route port takes dials from the moment the broker starts dialling its configured members, as nats-server's
/// does. A member that hears of us through gossip as soon as our first dial registers with the seed dials us once (an
/// implicit route is not tried again), so a refused dial leaves those two members without a route: seen once in CI,
/// RouteTlsTests' mixed cluster, nats-server B refused by our C while C's TLS dial to the seed was finishing.
/// </summary>
public sealed class RouteStartTests
{
    [Fact(Timeout = 30_000)]
    public async Task A_member_dialling_while_our_first_dial_is_still_open_is_taken_not_refused()
    {
        // A seed that accepts and never answers holds our first dial open (the start waits for it at most 250 ms).
        using var seed = new TcpListener(IPAddress.Loopback, 0);
        seed.Start();
        var seedPort = ((IPEndPoint)seed.LocalEndpoint).Port;
        var clusterPort = Ports.GetFreePort();
        var starting = TestBroker.StartAsync(options =>
        {
            options.Cluster.Name = "C";
            options.Cluster.Host = "127.0.0.1";
            options.Cluster.Port = clusterPort;
            options.Cluster.Routes = [$"nats-route://127.0.0.1:{seedPort}"];
        });
        using var dialled = await seed.AcceptSocketAsync().WaitAsync(TimeSpan.FromSeconds(10));

        // A member dialling us inside that window connects (it was refused while the port bound but did not listen),
        // and gets our INFO once the start takes dials.
        using var member = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await member.ConnectAsync(new IPEndPoint(IPAddress.Loopback, clusterPort));
        await using var broker = await starting;
        var buffer = new byte[4096];
        var read = await member.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(TimeSpan.FromSeconds(10));
        Assert.StartsWith("INFO ", Encoding.ASCII.GetString(buffer, 0, read), StringComparison.Ordinal);
    }

    [Theory(Timeout = 120_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Two_members_naming_each_other_and_started_at_once_keep_one_route(ServerKind otherKind)
    {
        // Their first dials cross: each side's dial to the other waits in the other's backlog until its own dial is
        // through, then meets the duplicate rule; one route must stay, on both sides (nats.c's pool-size tests).
        for (var round = 0; round < 5; round++)
        {
            var (portA, portB) = (Ports.GetFreePort(), Ports.GetFreePort());
            var startingA = ClusterNode.StartAsync(ServerKind.Ours, "A", [$"nats-route://127.0.0.1:{portB}"], clusterPort: portA);
            var startingB = ClusterNode.StartAsync(otherKind, "B", [$"nats-route://127.0.0.1:{portA}"], clusterPort: portB);
            await using var a = await startingA;
            await using var b = await startingB;
            await a.WaitForRoutesAsync(1);
            await b.WaitForRoutesAsync(1);
            await Task.Delay(1500);
            Assert.Equal((1, 1), ((await a.RoutezAsync()).GetProperty("num_routes").GetInt32(), (await b.RoutezAsync()).GetProperty("num_routes").GetInt32()));
        }
    }
}
