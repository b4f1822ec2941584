using System.Globalization;
using System.Text.Json;
using Broker.Core.Tests.Leaf;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// A hub that is also a cluster member relays between its routes and its leaf node links, as nats-server 2.9.10 does
/// (leafnode.go's updateSmap and initLeafNodeSmapAndSendSubs, route.go's updateRouteSubscriptionMap, client.go's
/// processMsgResults): a spoke linked to hub H, H routed to member M, a client on the spoke and one on M exchanging
/// messages, requests and queue-group work both ways; interest gone after an unsubscribe and after the spoke leaves,
/// kept while another source holds it. Each row mixes the servers differently; the last is nats-server everywhere, the
/// control. Every wait polls /leafz or /routez.
/// </summary>
public sealed class RouteLeafRelayTests
{
    /// <summary>(spoke, hub, member): ours as the hub, ours as the spoke and the member, all ours, all nats-server.</summary>
    public static TheoryData<ServerKind, ServerKind, ServerKind> Topologies => new()
    {
        { ServerKind.Reference, ServerKind.Ours, ServerKind.Reference },
        { ServerKind.Ours, ServerKind.Reference, ServerKind.Ours },
        { ServerKind.Ours, ServerKind.Ours, ServerKind.Ours },
        { ServerKind.Reference, ServerKind.Reference, ServerKind.Reference },
    };

    [Theory]
    [MemberData(nameof(Topologies))]
    public async Task Clients_on_the_spoke_and_on_another_member_exchange_messages_requests_and_queue_work(ServerKind spokeKind, ServerKind hubKind, ServerKind memberKind)
    {
        await using var net = await Topology.StartAsync(spokeKind, hubKind, memberKind);
        var (onSpoke, onMember, onHub) = (net.OnSpoke, net.OnMember, net.OnHub);

        // The spoke's interest reaches the member as the hub's RS+, the member's reaches the spoke as the hub's LS+.
        await using var spokeSub = await onSpoke.SubscribeCoreAsync<string>("to.spoke");
        await using var spokeService = await onSpoke.SubscribeCoreAsync<string>("svc.spoke");
        await using var memberSub = await onMember.SubscribeCoreAsync<string>("to.member.>");
        await using var memberService = await onMember.SubscribeCoreAsync<string>("svc.member");
        await onSpoke.PingAsync();
        await onMember.PingAsync();
        await net.Member.WaitForRoutesAsync(1, "to.spoke", "svc.spoke");
        await net.Spoke.WaitForLinksAsync(1, "to.member.>", "svc.member");

        await onMember.PublishAsync("to.spoke", "down", headers: new NatsHeaders { ["X-Relay"] = "1" });
        var down = await spokeSub.NextAsync();
        Assert.Equal(("down", "1"), (down.Data, down.Headers?["X-Relay"].ToString()));
        await onSpoke.PublishAsync("to.member.x", "up");
        var up = await memberSub.NextAsync();
        Assert.Equal(("to.member.x", "up"), (up.Subject, up.Data));

        // Request/reply both ways: the requester's inbox interest crosses ahead of its request.
        Assert.Equal("pong:m", await AnswerAsync(spokeService, onMember, "svc.spoke", "m"));
        Assert.Equal("pong:s", await AnswerAsync(memberService, onSpoke, "svc.member", "s"));

        // A queue group across the hub: members on one side, then on both; each message reaches one member. First the
        // member publishes to the spoke's members, then, once the first group is gone, the spoke to the member's.
        await LeafScenarios.QueueGroupGetsEachMessageOnceAsync(onMember, onSpoke, s => net.Member.WaitForRoutesAsync(1, s), s => net.Spoke.WaitForLinksAsync(1, s));
        await net.Member.WaitForNoInterestAsync("work");
        await WaitForNoLeafInterestAsync(net.Spoke.HttpPort, "work", "the spoke");
        await LeafScenarios.QueueGroupGetsEachMessageOnceAsync(onSpoke, onMember, s => net.Spoke.WaitForLinksAsync(1, s), s => net.Member.WaitForRoutesAsync(1, s));
    }

    [Theory]
    [MemberData(nameof(Topologies))]
    public async Task Relayed_interest_goes_with_its_last_source_after_unsubscribes_and_when_the_spoke_leaves(ServerKind spokeKind, ServerKind hubKind, ServerKind memberKind)
    {
        await using var net = await Topology.StartAsync(spokeKind, hubKind, memberKind);
        var (onSpoke, onMember, onHub) = (net.OnSpoke, net.OnMember, net.OnHub);

        // Unsubscribes on either side remove the relayed interest on the other.
        var fromSpoke = await onSpoke.SubscribeCoreAsync<string>("gone.spoke");
        var fromMember = await onMember.SubscribeCoreAsync<string>("gone.member");
        await onSpoke.PingAsync();
        await onMember.PingAsync();
        await net.Member.WaitForRoutesAsync(1, "gone.spoke");
        await net.Spoke.WaitForLinksAsync(1, "gone.member");
        await fromSpoke.DisposeAsync();
        await fromMember.DisposeAsync();
        await onSpoke.PingAsync();
        await onMember.PingAsync();
        await net.Member.WaitForNoInterestAsync("gone.spoke");
        await WaitForNoLeafInterestAsync(net.Spoke.HttpPort, "gone.member", "the spoke");

        // Interest with two sources (the spoke's client and the hub's): it stays while one is left.
        var sharedOnSpoke = await onSpoke.SubscribeCoreAsync<string>("shared");
        await using var sharedOnHub = await onHub.SubscribeCoreAsync<string>("shared");
        await onSpoke.PingAsync();
        await onHub.PingAsync();
        await net.Member.WaitForRoutesAsync(1, "shared");
        await net.WaitForHubLinkAsync("shared");
        await sharedOnSpoke.DisposeAsync();
        await onSpoke.PingAsync();
        await WaitForNoLeafInterestAsync(net.Hub.HttpPort, "shared", "the hub");
        await onHub.PingAsync();
        await net.Member.WaitForRoutesAsync(1, "shared");
        await onMember.PublishAsync("shared", "still");
        Assert.Equal("still", (await sharedOnHub.NextAsync()).Data);

        // The spoke leaves: its interest leaves the member, the member's stays on the hub.
        await using var kept = await onMember.SubscribeCoreAsync<string>("kept.member");
        await using var leaving = await onSpoke.SubscribeCoreAsync<string>("spoke.only");
        await onMember.PingAsync();
        await onSpoke.PingAsync();
        await net.Member.WaitForRoutesAsync(1, "spoke.only");
        await net.Spoke.WaitForLinksAsync(1, "kept.member");
        await net.Spoke.DisposeAsync();
        await LeafHub.WaitForLeafzAsync(net.Hub.HttpPort, 0, [], $"the hub ({hubKind})");
        await net.Member.WaitForNoInterestAsync("spoke.only");
        await net.Hub.WaitForRoutesAsync(1, "kept.member");
    }

    /// <summary>(hub, member): both take leaf links; the spoke is nats-server, linked to both.</summary>
    public static TheoryData<ServerKind, ServerKind> TwoHubs => new()
    {
        { ServerKind.Ours, ServerKind.Reference },
        { ServerKind.Reference, ServerKind.Ours },
        { ServerKind.Ours, ServerKind.Ours },
        { ServerKind.Reference, ServerKind.Reference },
    };

    [Theory]
    [MemberData(nameof(TwoHubs))]
    public async Task A_spoke_linked_to_two_members_hears_its_own_loop_subject_back(ServerKind hubKind, ServerKind memberKind)
    {
        // The spoke's $LDS subject goes from H over the route to M, which relays it down the spoke's other link.
        var hubLeaf = Ports.GetFreePort();
        var memberLeaf = Ports.GetFreePort();
        await using var hub = await StartHubAsync(hubKind, "H", hubLeaf, []);
        await using var member = await StartHubAsync(memberKind, "M", memberLeaf, [hub.RouteUrl()]);
        await hub.WaitForRoutesAsync(1);
        await member.WaitForRoutesAsync(1);
        await using var spoke = await LeafSpoke.StartAsync(ServerKind.Reference, new SpokeRemote(LeafUrl(hubLeaf)), new SpokeRemote(LeafUrl(memberLeaf)));
        await Eventually.AssertAsync(
            () => Task.FromResult(spoke.Log.Contains("Loop detected for leafnode account=\"$G\"", StringComparison.Ordinal)),
            "the spoke to detect the loop through the cluster",
            TimeSpan.FromSeconds(20));
    }

    private static string LeafUrl(int port) => $"nats-leaf://127.0.0.1:{port.ToString(CultureInfo.InvariantCulture)}";

    /// <summary>A cluster member (cluster C) that is also a leaf node hub on <paramref name="leafPort"/>.</summary>
    internal static Task<ClusterNode> StartHubAsync(ServerKind kind, string name, int leafPort, string[] routes) =>
        ClusterNode.StartAsync(
            kind,
            name,
            routes,
            configure: options =>
            {
                options.LeafNodes.Hub.Host = "127.0.0.1";
                options.LeafNodes.Hub.Port = leafPort;
            },
            referenceConfig: $"leafnodes {{ listen: \"127.0.0.1:{leafPort.ToString(CultureInfo.InvariantCulture)}\" }}");

    private static async Task<string?> AnswerAsync(INatsSub<string> service, NatsConnection requester, string subject, string data)
    {
        var responder = Task.Run(async () =>
        {
            var request = await service.NextAsync();
            await request.ReplyAsync("pong:" + request.Data);
        });
        var reply = await requester.RequestAsync<string, string>(subject, data);
        await responder;
        return reply.Data;
    }

    /// <summary>Polls /leafz?subs=1 until no link shows interest in <paramref name="subject"/>.</summary>
    private static Task WaitForNoLeafInterestAsync(int httpPort, string subject, string who) =>
        Eventually.AssertAsync(
            async () =>
            {
                var leafz = await LeafHub.GetAsync(httpPort, "/leafz?subs=1");
                return !Subjects(leafz).Contains(subject);
            },
            $"{who} to have no leaf interest in {subject}",
            TimeSpan.FromSeconds(20));

    private static HashSet<string> Subjects(JsonElement leafz) =>
        leafz.TryGetProperty("leafs", out var leafs) && leafs.ValueKind == JsonValueKind.Array
            ? leafs.EnumerateArray()
                .SelectMany(l => l.TryGetProperty("subscriptions_list", out var list) && list.ValueKind == JsonValueKind.Array ? list.EnumerateArray().Select(s => s.GetString()!) : [])
                .ToHashSet(StringComparer.Ordinal)
            : [];

    /// <summary>A spoke linked to hub H, H routed to member M (cluster C), each of the kind given, monitoring on.</summary>
    internal sealed class Topology : IAsyncDisposable
    {
        private Topology(LeafSpoke spoke, ClusterNode hub, ClusterNode member)
        {
            Spoke = spoke;
            Hub = hub;
            Member = member;
        }

        public LeafSpoke Spoke { get; }

        public ClusterNode Hub { get; }

        public ClusterNode Member { get; }

        /// <summary>A client of each server, connected once the spoke's link is up.</summary>
        public NatsConnection OnSpoke { get; private set; } = null!;

        public NatsConnection OnMember { get; private set; } = null!;

        public NatsConnection OnHub { get; private set; } = null!;

        public static async Task<Topology> StartAsync(ServerKind spokeKind, ServerKind hubKind, ServerKind memberKind)
        {
            var leafPort = Ports.GetFreePort();
            var hub = await StartHubAsync(hubKind, "H", leafPort, []);
            ClusterNode? member = null;
            Topology? topology = null;
            try
            {
                member = await ClusterNode.StartAsync(memberKind, "M", [hub.RouteUrl()]);
                topology = new Topology(await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(LeafUrl(leafPort))), hub, member);
                await hub.WaitForRoutesAsync(1);
                await member.WaitForRoutesAsync(1);
                await topology.Spoke.WaitForLinksAsync(1);
                await LeafHub.WaitForLeafzAsync(hub.HttpPort, 1, [], $"the hub ({hubKind})");
                topology.OnSpoke = await NatsClients.ConnectAsync(topology.Spoke.ClientUrl, "spoke");
                topology.OnMember = await NatsClients.ConnectAsync(member.ClientUrl, "member");
                topology.OnHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
                return topology;
            }
            catch when (topology is not null)
            {
                await topology.DisposeAsync();
                throw;
            }
            catch
            {
                if (member is not null)
                {
                    await member.DisposeAsync();
                }

                await hub.DisposeAsync();
                throw;
            }
        }

        /// <summary>Waits until the hub's link shows the spoke's interest in <paramref name="subject"/>.</summary>
        public Task WaitForHubLinkAsync(string subject) => LeafHub.WaitForLeafzAsync(Hub.HttpPort, 1, [subject], $"the hub ({Hub.Kind})");

        public async ValueTask DisposeAsync()
        {
            foreach (var client in new[] { OnSpoke, OnMember, OnHub })
            {
                if (client is not null)
                {
                    await client.DisposeAsync();
                }
            }

            await Spoke.DisposeAsync();
            await Member.DisposeAsync();
            await Hub.DisposeAsync();
        }
    }
}
