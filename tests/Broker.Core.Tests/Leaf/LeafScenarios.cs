using System.Collections.Concurrent;
using System.Text.Json;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// Scenarios across one leaf link, shared by the spoke's and the hub's tests (whichever side is ours): messages both
/// ways, a queue group served once, and a leaf user's permissions kept. Each waits on /leafz through the callbacks it is given.
/// </summary>
internal static class LeafScenarios
{
    /// <summary>
    /// Members only on the spoke, then on both sides: every message published on either side reaches exactly one member.
    /// <paramref name="hubSees"/> and <paramref name="spokeSees"/> wait until that side's link shows interest in a subject.
    /// </summary>
    public static async Task QueueGroupGetsEachMessageOnceAsync(NatsConnection onHub, NatsConnection onSpoke, Func<string, Task> hubSees, Func<string, Task> spokeSees)
    {
        var received = new ConcurrentBag<string>();
        using var stop = new CancellationTokenSource();
        var subscriptions = new List<INatsSub<string>>();
        var members = new List<Task>();
        foreach (var connection in new[] { onSpoke, onSpoke })
        {
            var sub = await connection.SubscribeCoreAsync<string>("work", queueGroup: "workers");
            subscriptions.Add(sub);
            members.Add(CollectAsync(sub, received, stop.Token));
        }

        await onSpoke.PingAsync();
        await hubSees("work");

        // Only the spoke has members: every message published on the hub crosses once.
        for (var i = 0; i < 40; i++)
        {
            await onHub.PublishAsync("work", "hub-" + i);
        }

        await onHub.PingAsync();
        Assert.True(await Eventually.TrueAsync(() => received.Count >= 40), $"received {received.Count} of 40");

        // Members on both sides: each message still reaches exactly one member.
        foreach (var connection in new[] { onHub, onHub })
        {
            var sub = await connection.SubscribeCoreAsync<string>("work", queueGroup: "workers");
            subscriptions.Add(sub);
            members.Add(CollectAsync(sub, received, stop.Token));
        }

        await onHub.PingAsync();
        await spokeSees("work");
        for (var i = 0; i < 40; i++)
        {
            await onHub.PublishAsync("work", "hub2-" + i);
            await onSpoke.PublishAsync("work", "spoke-" + i);
        }

        await onHub.PingAsync();
        await onSpoke.PingAsync();
        Assert.True(await Eventually.TrueAsync(() => received.Count >= 120), $"received {received.Count} of 120");

        // A straggler would be a duplicate: a round trip on each side lets it arrive before the count is checked.
        await onHub.PingAsync();
        await onSpoke.PingAsync();
        await stop.CancelAsync();
        foreach (var sub in subscriptions)
        {
            await sub.DisposeAsync();
        }

        await Task.WhenAll(members);
        Assert.Equal(120, received.Count);
        Assert.Equal(120, received.Distinct().Count());
    }

    /// <summary>
    /// The leaf user may publish <c>up.&gt;</c> and subscribe <c>down.&gt;</c>: the spoke's interest outside
    /// <c>down.&gt;</c> never reaches the hub, the hub's outside <c>up.&gt;</c> never the spoke, and the messages follow.
    /// </summary>
    public static async Task PermissionsAreKeptAsync(NatsConnection onHub, NatsConnection onSpoke, Func<string, Task> hubSees, Func<string, Task> spokeSees, Func<Task<JsonElement>> hubLeafz)
    {
        await using var downAllowed = await onSpoke.SubscribeCoreAsync<string>("down.x");
        await using var downOther = await onSpoke.SubscribeCoreAsync<string>("other.x");
        await using var upAllowed = await onHub.SubscribeCoreAsync<string>("up.x");
        await using var upOther = await onHub.SubscribeCoreAsync<string>("sideways.x");
        await onSpoke.PingAsync();
        await onHub.PingAsync();
        await hubSees("down.x");
        await spokeSees("up.x");
        var leafz = await hubLeafz();
        Assert.DoesNotContain("other.x", leafz.GetProperty("leafs")[0].GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()));

        await onHub.PublishAsync("other.x", "no");
        await onHub.PublishAsync("down.x", "yes");
        Assert.Equal("yes", (await downAllowed.NextAsync()).Data);
        await onSpoke.PublishAsync("sideways.x", "no");
        await onSpoke.PublishAsync("up.x", "yes");
        Assert.Equal("yes", (await upAllowed.NextAsync()).Data);
        await onHub.PingAsync();
        await onSpoke.PingAsync();
        Assert.True(downOther.IsEmpty());
        Assert.True(upOther.IsEmpty());
    }

    /// <summary>
    /// A message with headers from the hub to the spoke's <c>to.spoke</c>, one from the spoke to the hub's
    /// <c>to.hub.&gt;</c>, and a request answered by <paramref name="serviceSub"/> (on the other side of
    /// <paramref name="requester"/>) with its reply back across the link. The subscriptions' interest has crossed.
    /// </summary>
    public static async Task MessagesCrossBothWaysAsync(NatsConnection onHub, NatsConnection onSpoke, INatsSub<string> spokeSub, INatsSub<string> hubSub, NatsConnection requester, INatsSub<string> serviceSub)
    {
        await onHub.PublishAsync("to.spoke", "down", headers: new NatsHeaders { ["X-Leaf"] = "1" });
        var down = await spokeSub.NextAsync();
        Assert.Equal("down", down.Data);
        Assert.Equal("1", down.Headers?["X-Leaf"].ToString());

        await onSpoke.PublishAsync("to.hub.a", "up");
        var up = await hubSub.NextAsync();
        Assert.Equal(("to.hub.a", "up"), (up.Subject, up.Data));

        var responder = Task.Run(async () =>
        {
            var request = await serviceSub.NextAsync();
            await request.ReplyAsync("pong:" + request.Data);
        });
        var reply = await requester.RequestAsync<string, string>("service", "ping");
        Assert.Equal("pong:ping", reply.Data);
        await responder;
    }

    /// <summary>Adds each message's payload to <paramref name="received"/> until <paramref name="stop"/>.</summary>
    public static async Task CollectAsync(INatsSub<string> sub, ConcurrentBag<string> received, CancellationToken stop)
    {
        try
        {
            await foreach (var message in sub.Msgs.ReadAllAsync(stop))
            {
                received.Add(message.Data!);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }
}
