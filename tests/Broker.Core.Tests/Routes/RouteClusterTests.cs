using System.Collections.Concurrent;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// The broker as a cluster member beside real nats-server 2.9.10 processes: a three-node mixed cluster formed through
/// gossip (implicit routes), messages, request/reply and headers across routes, queue groups served once across the
/// cluster, interest removed on unsubscribe and restored after a member restarts, route authorization, the cluster's
/// client URLs in INFO. Every wait polls /routez or a subscription.
/// </summary>
public sealed class RouteClusterTests
{
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory]
    [MemberData(nameof(Kinds))]
    public Task A_mixed_cluster_forms_through_gossip_and_carries_messages_replies_and_queue_groups(ServerKind seedKind)
        => MixedClusterCarriesTrafficAsync(seedKind, setup: null, queueRequests: false);

    /// <summary>
    /// The seed (<paramref name="seedKind"/>), a nats-server and one of ours dialling it, each with <paramref name="setup"/>:
    /// the cluster forms through gossip and carries messages with headers, requests, a queue group (messages, or
    /// requests with <paramref name="queueRequests"/>), and interest removals.
    /// </summary>
    internal static async Task MixedClusterCarriesTrafficAsync(ServerKind seedKind, RouteSetup? setup, bool queueRequests)
    {
        // The seed, a nats-server and one of ours dialling it; the two learn of each other from the seed's gossip.
        await using var a = await ClusterNode.StartAsync(seedKind, "A", setup: setup);
        await using var b = await ClusterNode.StartAsync(ServerKind.Reference, "B", [a.RouteUrl()], setup: setup);
        await using var c = await ClusterNode.StartAsync(ServerKind.Ours, "C", [a.RouteUrl()], setup: setup);
        await a.WaitForRoutesAsync(2);
        await b.WaitForRoutesAsync(2);
        await c.WaitForRoutesAsync(2);

        await using var onA = await NatsClients.ConnectAsync(a.ClientUrl, "a");
        await using var onB = await NatsClients.ConnectAsync(b.ClientUrl, "b");
        await using var onC = await NatsClients.ConnectAsync(c.ClientUrl, "c");
        await using var subB = await onB.SubscribeCoreAsync<string>("to.b.>");
        await using var subC = await onC.SubscribeCoreAsync<string>("to.c");
        await using var service = await onA.SubscribeCoreAsync<string>("service");
        await onA.PingAsync();
        await onB.PingAsync();
        await onC.PingAsync();
        await c.WaitForRoutesAsync(2, "to.b.>", "service");
        await b.WaitForRoutesAsync(2, "to.c", "service");
        await a.WaitForRoutesAsync(2, "to.b.>", "to.c");

        // Ours to nats-server, with headers; nats-server to ours.
        await onC.PublishAsync("to.b.x", "from-c", headers: new NatsHeaders { ["X-Route"] = "1" });
        var atB = await subB.NextAsync();
        Assert.Equal(("to.b.x", "from-c", "1"), (atB.Subject, atB.Data, atB.Headers?["X-Route"].ToString()));
        await onB.PublishAsync("to.c", "from-b");
        Assert.Equal("from-b", (await subC.NextAsync()).Data);

        // Request/reply across routes, both directions.
        var responder = Task.Run(async () =>
        {
            for (var i = 0; i < 2; i++)
            {
                var request = await service.NextAsync();
                await request.ReplyAsync("pong:" + request.Data);
            }
        });
        Assert.Equal("pong:b", (await onB.RequestAsync<string, string>("service", "b")).Data);
        Assert.Equal("pong:c", (await onC.RequestAsync<string, string>("service", "c")).Data);
        await responder;

        // A queue group with a member on each server: every message once across the cluster.
        await QueueGroupTakesEachOnceAsync([a, b, c], [onA, onB, onC], queueRequests);

        // Interest removed on unsubscribe and when a client disconnects.
        await subB.UnsubscribeAsync();
        await onB.PingAsync();
        await c.WaitForNoInterestAsync("to.b.>");
        await onC.DisposeAsync();
        await a.WaitForNoInterestAsync("to.c");
        await b.WaitForNoInterestAsync("to.c");
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_restarted_member_gets_the_interest_again_and_sends_its_own(ServerKind restartedKind)
    {
        await using var a = await ClusterNode.StartAsync(restartedKind, "A");
        await using var b = await ClusterNode.StartAsync(ServerKind.Ours, "B", [a.RouteUrl()]);
        await using var onB = await NatsClients.ConnectAsync(b.ClientUrl, "b");
        await using var subB = await onB.SubscribeCoreAsync<string>("kept");
        await onB.PingAsync();
        await a.WaitForRoutesAsync(1, "kept");

        // The seed goes away and comes back on the same route port: our member dials it again and re-sends its interest.
        await a.RestartAsync();
        await a.WaitForRoutesAsync(1, "kept");
        await b.WaitForRoutesAsync(1);
        await using var onA = await NatsClients.ConnectAsync(a.ClientUrl, "a");
        await using var subA = await onA.SubscribeCoreAsync<string>("back");
        await onA.PingAsync();
        await b.WaitForRoutesAsync(1, "back");
        await onA.PublishAsync("kept", "after-restart");
        Assert.Equal("after-restart", (await subB.NextAsync()).Data);
        await onB.PublishAsync("back", "to-a");
        Assert.Equal("to-a", (await subA.NextAsync()).Data);
    }

    [Fact]
    public Task A_cluster_of_brokers_carries_messages_and_replaces_a_restarted_member() => BrokersReplaceARestartedMemberAsync(setup: null);

    /// <summary>Three of ours with <paramref name="setup"/>: C restarts, A and B take it back, messages cross, one route per pair.</summary>
    internal static async Task BrokersReplaceARestartedMemberAsync(RouteSetup? setup)
    {
        await using var a = await ClusterNode.StartAsync(ServerKind.Ours, "A", setup: setup);
        await using var b = await ClusterNode.StartAsync(ServerKind.Ours, "B", [a.RouteUrl()], setup: setup);
        await using var c = await ClusterNode.StartAsync(ServerKind.Ours, "C", [a.RouteUrl(), b.RouteUrl()], setup: setup);
        await a.WaitForRoutesAsync(2);
        await b.WaitForRoutesAsync(2);
        await c.WaitForRoutesAsync(2);

        await using var onA = await NatsClients.ConnectAsync(a.ClientUrl, "a");
        await using var subA = await onA.SubscribeCoreAsync<string>("in.a");
        await onA.PingAsync();
        await c.WaitForRoutesAsync(2, "in.a");

        // C restarts (a new server id): A and B take it back, and it gets A's interest again.
        await c.RestartAsync();
        await c.WaitForRoutesAsync(2, "in.a");
        await a.WaitForRoutesAsync(2);
        await using var onC = await NatsClients.ConnectAsync(c.ClientUrl, "c");
        await onC.PublishAsync("in.a", "once");
        Assert.Equal("once", (await subA.NextAsync()).Data);

        // Exactly one route per member pair: no duplicate left by members dialling each other.
        foreach (var node in new[] { a, b, c })
        {
            var routez = await node.RoutezAsync();
            var remotes = routez.GetProperty("routes").EnumerateArray().Select(r => r.GetProperty("remote_id").GetString()).ToList();
            Assert.Equal(remotes.Count, remotes.Distinct().Count());
        }
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Routes_authenticate_with_the_cluster_user(ServerKind seedKind)
    {
        await using var a = await ClusterNode.StartAsync(seedKind, "A", auth: ("route", "s3cret"));
        await using var good = await ClusterNode.StartAsync(ServerKind.Ours, "B", [a.RouteUrl("route:s3cret")]);
        await a.WaitForRoutesAsync(1);
        await good.WaitForRoutesAsync(1);

        // Wrong credentials: refused with nats-server's error, and no route appears on either side.
        await using var bad = await ClusterNode.StartAsync(ServerKind.Ours, "C", [a.RouteUrl("route:wrong")]);
        await Eventually.AssertAsync(
            () => Task.FromResult(bad.Log.Contains("Authorization Violation", StringComparison.Ordinal)),
            "the refused member to log the seed's Authorization Violation",
            TimeSpan.FromSeconds(10));
        Assert.Equal(0, (await bad.RoutezAsync()).GetProperty("num_routes").GetInt32());
        Assert.Equal(1, (await a.RoutezAsync()).GetProperty("num_routes").GetInt32());
    }

    [Fact]
    public async Task Clients_learn_the_cluster_urls_and_hear_of_a_new_member()
    {
        await using var a = await ClusterNode.StartAsync(ServerKind.Ours, "A");
        await using var client = await NatsClients.ConnectAsync(a.ClientUrl, "discover");
        var own = new Uri(a.ClientUrl).Authority;
        Assert.Contains(own, client.ServerInfo!.ClientConnectUrls ?? []);

        await using var b = await ClusterNode.StartAsync(ServerKind.Reference, "B", [a.RouteUrl()]);
        await a.WaitForRoutesAsync(1);
        var other = new Uri(b.ClientUrl).Authority;
        Assert.True(
            await Eventually.TrueAsync(() => client.ServerInfo!.ClientConnectUrls?.Contains(other) == true, TimeSpan.FromSeconds(10)),
            $"the client to learn {other}; it has [{string.Join(", ", client.ServerInfo!.ClientConnectUrls ?? [])}]");

        await b.StopAsync();
        Assert.True(
            await Eventually.TrueAsync(() => client.ServerInfo!.ClientConnectUrls?.Contains(other) == false, TimeSpan.FromSeconds(10)),
            "the client to forget the member that left");
    }

    /// <summary>
    /// A queue group with a member on the client of each node: 60 messages (or 30 requests, each answered) from the
    /// clients in turn are taken once each across the cluster.
    /// </summary>
    internal static async Task QueueGroupTakesEachOnceAsync(ClusterNode[] nodes, NatsConnection[] clients, bool requests)
    {
        var received = new ConcurrentBag<string>();
        using var stop = new CancellationTokenSource();
        var members = new List<(INatsSub<string> Sub, Task Loop)>();
        foreach (var connection in clients)
        {
            var sub = await connection.SubscribeCoreAsync<string>("work", queueGroup: "workers");
            members.Add((sub, Serve(sub, connection.Opts.Name, received, stop.Token)));
            await connection.PingAsync();
        }

        foreach (var node in nodes)
        {
            await node.WaitForRoutesAsync(nodes.Length - 1, "work");
        }

        var count = requests ? 30 : 60;
        for (var i = 0; i < count; i++)
        {
            var sender = clients[i % clients.Length];
            if (requests)
            {
                var reply = await sender.RequestAsync<string, string>("work", $"{sender.Opts.Name}-{i}");
                Assert.EndsWith($":{sender.Opts.Name}-{i}", reply.Data, StringComparison.Ordinal);
            }
            else
            {
                await sender.PublishAsync("work", $"{sender.Opts.Name}-{i}");
            }
        }

        Assert.True(await Eventually.TrueAsync(() => received.Count >= count, TimeSpan.FromSeconds(10)), $"received {received.Count} of {count}");
        foreach (var client in clients)
        {
            await client.PingAsync();
        }

        Assert.Equal(count, received.Count);
        Assert.Equal(count, received.Distinct().Count());
        await stop.CancelAsync();
        foreach (var (sub, loop) in members)
        {
            await sub.DisposeAsync();
            await loop;
        }
    }

    // A member: takes each message, and answers it when it is a request.
    private static async Task Serve(INatsSub<string> sub, string? name, ConcurrentBag<string> received, CancellationToken stop)
    {
        try
        {
            await foreach (var message in sub.Msgs.ReadAllAsync(stop))
            {
                received.Add(message.Data!);
                if (message.ReplyTo is not null)
                {
                    await message.ReplyAsync($"{name}:{message.Data}", cancellationToken: stop);
                }
            }
        }
        catch (OperationCanceledException)
        {
        }
    }
}
