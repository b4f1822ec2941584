using System.Net;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// A hub that is a cluster member, between a scripted member on its route port and a scripted spoke on its leaf port,
/// the same script against our broker and nats-server 2.9.10: the spoke's LS+ goes out as RS+ (a queue key with the
/// weight summed with the hub's own members), the member's RS+ as LS+, each removed only when its last source goes,
/// and messages cross both ways as RMSG and LMSG.
/// </summary>
public sealed class RouteLeafRelayWireTests
{
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task The_hub_turns_a_spokes_interest_into_route_interest_and_back(ServerKind kind)
    {
        var leafPort = Ports.GetFreePort();
        await using var hub = await RouteLeafRelayTests.StartHubAsync(kind, "H", leafPort, []);
        await using var route = await RawClient.ConnectAsync(new IPEndPoint(IPAddress.Loopback, hub.ClusterPort));
        await route.SendAsync(RouteWireTests.Connect + RouteWireTests.Info);
        await hub.WaitForRoutesAsync(1);
        await using var spoke = await RawClient.ConnectAsync(leafPort);
        await spoke.SendAsync("CONNECT {\"name\":\"raw\",\"headers\":true}\r\n");
        await spoke.PingAndCollectAsync();

        // The spoke's interest reaches the member; a plain key counted with the hub's own subscriber.
        await spoke.SendAsync("LS+ plain.s\r\nLS+ q.w grp 1\r\nLS+ both.s\r\n");
        await RouteWireTests.ExpectAsync(route, "RS+ $G plain.s", "RS+ $G q.w grp 1", "RS+ $G both.s");
        await using var client = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var member = await client.SubscribeCoreAsync<string>("q.w", queueGroup: "grp");
        await using var both = await client.SubscribeCoreAsync<string>("both.s");
        await client.PingAsync();
        await RouteWireTests.ExpectAsync(route, "RS+ $G q.w grp 2");
        await spoke.SendAsync("LS- plain.s\r\nLS- both.s\r\nLS- q.w grp\r\n");
        await RouteWireTests.ExpectAsync(route, "RS- $G plain.s", "RS+ $G q.w grp 1");
        await both.UnsubscribeAsync();
        await client.PingAsync();
        await RouteWireTests.ExpectAsync(route, "RS- $G both.s");

        // The member's interest reaches the spoke and leaves it.
        await route.SendAsync("RS+ $G from.route\r\nRS+ $G rq rg 1\r\n");
        await RouteWireTests.ExpectAsync(spoke, "LS+ from.route", "LS+ rq rg 1");

        // Messages: the member's down to the spoke (plain and for a queue group), the spoke's up to the member.
        await spoke.SendAsync("LS+ down.s\r\nLS+ dq dg 1\r\n");
        await RouteWireTests.ExpectAsync(route, "RS+ $G down.s", "RS+ $G dq dg 1");
        await route.SendAsync("RMSG $G down.s 4\r\ndown\r\nRMSG $G dq | dg 2\r\nqd\r\n");
        await RouteWireTests.ExpectAsync(spoke, "LMSG down.s 4", "down", "LMSG dq | dg 2", "qd");
        await spoke.SendAsync("LMSG from.route reply.r 2\r\nup\r\nLMSG rq + reply.q rg 2\r\nuq\r\n");
        await RouteWireTests.ExpectAsync(route, "RMSG $G from.route reply.r 2", "up", "RMSG $G rq + reply.q rg 2", "uq");
        await route.SendAsync("RS- $G from.route\r\n");
        await RouteWireTests.ExpectAsync(spoke, "LS- from.route");

        if (kind == ServerKind.Ours)
        {
            // Ours relays a new queue key with its weight; nats-server 2.9.10 counts a new remote queue key as one
            // (processLeafSub's and processRemoteSub's first delta), which would relay "wq g 1" here (docs/scale-out.md).
            await spoke.SendAsync("LS+ wq g 3\r\n");
            await RouteWireTests.ExpectAsync(route, "RS+ $G wq g 3");
            await route.SendAsync("RS+ $G wq g 2\r\n");
            await RouteWireTests.ExpectAsync(spoke, "LS+ wq g 2");
        }
    }
}
