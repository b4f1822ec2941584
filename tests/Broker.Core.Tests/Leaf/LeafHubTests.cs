using System.Collections.Concurrent;
using Broker.Core.Auth;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// The broker as a leaf node hub (<c>leafnodes { listen }</c>) with nats-server 2.9.10 and our broker as spokes, each
/// scenario also run with nats-server as the hub and the spoke (the scenario's own check): messages both ways with
/// headers and replies, queue groups across the link, interest restored when the spoke restarts, a wrong password,
/// accounts bound per leaf user, and a leaf user's permissions kept by the spoke. Every wait polls /leafz.
/// </summary>
public sealed class LeafHubTests
{
    public static TheoryData<ServerKind, ServerKind> Pairs => new()
    {
        { ServerKind.Ours, ServerKind.Reference },
        { ServerKind.Ours, ServerKind.Ours },
        { ServerKind.Reference, ServerKind.Reference },
    };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task Messages_cross_the_link_both_ways_with_headers_and_replies(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var hub = await HubUnderTest.StartAsync(hubKind);
        await using var spoke = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl()));
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var spokeSub = await onSpoke.SubscribeCoreAsync<string>("to.spoke");
        await using var hubSub = await onHub.SubscribeCoreAsync<string>("to.hub.>");
        await using var service = await onHub.SubscribeCoreAsync<string>("service");
        await onSpoke.PingAsync();
        await onHub.PingAsync();
        await hub.WaitForLinksAsync(1, "to.spoke");
        await spoke.WaitForLinksAsync(1, "to.hub.>", "service");

        // The hub's monitoring counts the accepted link: the spoke's address, the account, /varz leafnodes and leaf.port.
        var link = (await hub.LeafzAsync()).GetProperty("leafs")[0];
        Assert.Equal(("$G", "127.0.0.1"), (link.GetProperty("account").GetString(), link.GetProperty("ip").GetString()));
        var varz = await LeafHub.GetAsync(hub.HttpPort, "/varz");
        Assert.Equal(1, varz.GetProperty("leafnodes").GetInt32());
        Assert.Equal(hub.LeafPort, varz.GetProperty("leaf").GetProperty("port").GetInt32());

        // A request from the spoke to a service on the hub.
        await LeafScenarios.MessagesCrossBothWaysAsync(onHub, onSpoke, spokeSub, hubSub, onSpoke, service);
    }

    public static TheoryData<ServerKind> HubKinds => new() { ServerKind.Ours, ServerKind.Reference };

    /// <summary>
    /// A nats-server spoke and our spoke on one hub reach each other through it: the hub relays each spoke's interest
    /// to the other and their messages between them, a queue group with a member on each spoke gets each message once.
    /// </summary>
    [Theory]
    [MemberData(nameof(HubKinds))]
    public async Task Spokes_reach_each_other_through_the_hub(ServerKind hubKind)
    {
        await using var hub = await HubUnderTest.StartAsync(hubKind);
        await using var theirs = await LeafSpoke.StartAsync(ServerKind.Reference, new SpokeRemote(hub.LeafUrl()));
        await using var ours = await LeafSpoke.StartAsync(ServerKind.Ours, new SpokeRemote(hub.LeafUrl()));
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var onTheirs = await NatsClients.ConnectAsync(theirs.ClientUrl, "theirs");
        await using var onOurs = await NatsClients.ConnectAsync(ours.ClientUrl, "ours");
        await using var toTheirs = await onTheirs.SubscribeCoreAsync<string>("to.theirs");
        await using var toOurs = await onOurs.SubscribeCoreAsync<string>("to.ours");
        var received = new ConcurrentBag<string>();
        using var stop = new CancellationTokenSource();
        var memberOnTheirs = await onTheirs.SubscribeCoreAsync<string>("jobs", queueGroup: "q");
        var memberOnOurs = await onOurs.SubscribeCoreAsync<string>("jobs", queueGroup: "q");
        var members = new[] { LeafScenarios.CollectAsync(memberOnTheirs, received, stop.Token), LeafScenarios.CollectAsync(memberOnOurs, received, stop.Token) };
        await onTheirs.PingAsync();
        await onOurs.PingAsync();
        await hub.WaitForLinksAsync(2, "to.theirs", "to.ours", "jobs");
        await theirs.WaitForLinksAsync(1, "to.ours");
        await ours.WaitForLinksAsync(1, "to.theirs");

        await onOurs.PublishAsync("to.theirs", "from ours");
        Assert.Equal("from ours", (await toTheirs.NextAsync()).Data);
        await onTheirs.PublishAsync("to.ours", "from theirs");
        Assert.Equal("from theirs", (await toOurs.NextAsync()).Data);

        for (var i = 0; i < 30; i++)
        {
            await onHub.PublishAsync("jobs", "hub-" + i);
        }

        await onHub.PingAsync();
        Assert.True(await Eventually.TrueAsync(() => received.Count >= 30), $"received {received.Count} of 30");
        await onHub.PingAsync();
        await onTheirs.PingAsync();
        await onOurs.PingAsync();
        await stop.CancelAsync();
        await memberOnTheirs.DisposeAsync();
        await memberOnOurs.DisposeAsync();
        await Task.WhenAll(members);
        Assert.Equal(30, received.Count);
        Assert.Equal(30, received.Distinct().Count());
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_queue_group_across_the_link_gets_each_message_once(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var hub = await HubUnderTest.StartAsync(hubKind);
        await using var spoke = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl()));
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await LeafScenarios.QueueGroupGetsEachMessageOnceAsync(onHub, onSpoke, s => hub.WaitForLinksAsync(1, s), s => spoke.WaitForLinksAsync(1, s));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task Interest_is_restored_when_the_spoke_restarts(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var hub = await HubUnderTest.StartAsync(hubKind);
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var hubSub = await onHub.SubscribeCoreAsync<string>("to.hub");
        await onHub.PingAsync();
        await using (var first = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl())))
        await using (var client = await NatsClients.ConnectAsync(first.ClientUrl, "spoke"))
        await using (var old = await client.SubscribeCoreAsync<string>("gone.with.spoke"))
        {
            await client.PingAsync();
            await hub.WaitForLinksAsync(1, "gone.with.spoke");
        }

        await hub.WaitForLinksAsync(0);
        await using var spoke = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl()));
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var spokeSub = await onSpoke.SubscribeCoreAsync<string>("to.spoke");
        await onSpoke.PingAsync();
        await hub.WaitForLinksAsync(1, "to.spoke");
        await spoke.WaitForLinksAsync(1, "to.hub");
        var subjects = (await hub.LeafzAsync()).GetProperty("leafs")[0].GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString());
        Assert.DoesNotContain("gone.with.spoke", subjects);

        await onHub.PublishAsync("to.spoke", "down");
        Assert.Equal("down", (await spokeSub.NextAsync()).Data);
        await onSpoke.PublishAsync("to.hub", "up");
        Assert.Equal("up", (await hubSub.NextAsync()).Data);
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_wrong_password_gets_no_link(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var hub = await HubUnderTest.StartAsync(
            hubKind,
            o => (o.LeafNodes.Hub.User, o.LeafNodes.Hub.Password) = ("leaf", "s3cret"),
            "  authorization { user: leaf, password: s3cret }");
        await using var spoke = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl("leaf:wrong")));
        Assert.True(await Eventually.TrueAsync(() => spoke.Log.Contains("'Authorization Violation'", StringComparison.Ordinal), TimeSpan.FromSeconds(10)), spoke.Log);
        Assert.Equal(0, (await hub.LeafzAsync()).GetProperty("leafnodes").GetInt32());

        // The right password is let in.
        await using var good = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl("leaf:s3cret")));
        await good.WaitForLinksAsync(1);
        await hub.WaitForLinksAsync(1);
    }

    /// <summary>Each leaf user's <c>account</c> binds its links: a spoke's messages reach that account's clients only.</summary>
    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_leaf_users_account_binds_the_link(ServerKind hubKind, ServerKind spokeKind)
    {
        const string Accounts = "accounts { A { users: [ { user: ca, password: p } ] }, B { users: [ { user: cb, password: p } ] } }";
        await using var hub = await HubUnderTest.StartAsync(
            hubKind,
            o =>
            {
                o.Accounts.Add(new AccountOptions { Name = "A", Users = [new UserOptions { User = "ca", Password = "p" }] });
                o.Accounts.Add(new AccountOptions { Name = "B", Users = [new UserOptions { User = "cb", Password = "p" }] });
                o.LeafNodes.Hub.Users = [new LeafUserOptions { User = "la", Password = "p", Account = "A" }, new LeafUserOptions { User = "lb", Password = "p", Account = "B" }];
            },
            "  authorization { users: [ { user: la, password: p, account: A }, { user: lb, password: p, account: B } ] }",
            Accounts);
        await using var spoke = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl("la:p")));
        await using var inA = await NatsClients.ConnectAsync(hub.ClientUrl, "a", o => o.WithUser("ca", "p"));
        await using var inB = await NatsClients.ConnectAsync(hub.ClientUrl, "b", o => o.WithUser("cb", "p"));
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var subA = await inA.SubscribeCoreAsync<string>("edge.data");
        await using var subB = await inB.SubscribeCoreAsync<string>("edge.data");
        await using var spokeSub = await onSpoke.SubscribeCoreAsync<string>("to.edge");
        await inA.PingAsync();
        await inB.PingAsync();
        await onSpoke.PingAsync();
        await hub.WaitForLinksAsync(1, "to.edge");
        await spoke.WaitForLinksAsync(1, "edge.data");
        Assert.Equal("A", (await hub.LeafzAsync()).GetProperty("leafs")[0].GetProperty("account").GetString());

        await onSpoke.PublishAsync("edge.data", "up");
        Assert.Equal("up", (await subA.NextAsync()).Data);
        await inB.PublishAsync("to.edge", "from B");
        await inA.PublishAsync("to.edge", "from A");
        Assert.Equal("from A", (await spokeSub.NextAsync()).Data);
        await inB.PingAsync();
        await onSpoke.PingAsync();
        Assert.True(subB.IsEmpty());
        Assert.True(spokeSub.IsEmpty());
    }

    /// <summary>
    /// Without <c>leafnodes.authorization</c> a spoke authenticates as one of the broker's users; the user's
    /// permissions go to the spoke in the connect-info INFO (its subscribe permission is what the spoke may import,
    /// its publish permission what it may export), and the spoke keeps within them.
    /// </summary>
    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_leaf_users_permissions_are_sent_and_kept(ServerKind hubKind, ServerKind spokeKind)
    {
        const string Users = "authorization { users: [ { user: leaf, password: p, permissions: { publish: \"up.>\", subscribe: \"down.>\" } }, { user: client, password: p } ] }";
        await using var hub = await HubUnderTest.StartAsync(
            hubKind,
            o => o.Authorization.Users =
            [
                new UserOptions { User = "leaf", Password = "p", Permissions = new PermissionsOptions { Publish = new() { Allow = ["up.>"] }, Subscribe = new() { Allow = ["down.>"] } } },
                new UserOptions { User = "client", Password = "p" },
            ],
            extra: Users);
        await using var spoke = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl("leaf:p")));
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub", o => o.WithUser("client", "p"));
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await LeafScenarios.PermissionsAreKeptAsync(onHub, onSpoke, s => hub.WaitForLinksAsync(1, s), s => spoke.WaitForLinksAsync(1, s), hub.LeafzAsync);
        Assert.DoesNotContain("Permissions Violation", hub.Log, StringComparison.Ordinal);
    }
}
