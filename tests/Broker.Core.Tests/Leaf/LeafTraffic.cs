using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// What every kind of link must carry, checked the same way over TLS and WebSocket: messages both ways with headers,
/// a queue group whose members are on the spoke getting each of the hub's messages once (the hub sends a group's
/// messages by the weight the spoke announced), interest on both sides restored after the hub restarts.
/// </summary>
internal static class LeafTraffic
{
    /// <summary>A spoke client's subscription shows in the hub's /leafz: the link is up and carries interest.</summary>
    public static async Task InterestReachesTheHubAsync(ILeafHubUnderTest hub, LeafSpoke spoke, string subject)
    {
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var sub = await onSpoke.SubscribeCoreAsync<string>(subject);
        await onSpoke.PingAsync();
        await hub.WaitForLinksAsync(1, subject);
    }

    /// <summary>
    /// The hub restarts: the spoke dials again, sends its interest again and takes the hub's new interest;
    /// <paramref name="afterRestart"/> runs with a spoke client once the hub was restarted, before the link is back.
    /// </summary>
    public static async Task ComesBackAfterTheHubRestartsAsync(LeafHub hub, LeafSpoke spoke, Func<NatsConnection, Task>? afterRestart = null)
    {
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var kept = await onSpoke.SubscribeCoreAsync<string>("kept");
        await onSpoke.PingAsync();
        await hub.WaitForLinksAsync(1, "kept");

        await hub.RestartAsync();
        if (afterRestart is not null)
        {
            await afterRestart(onSpoke);
        }

        await hub.WaitForLinksAsync(1, "kept");
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var hubSub = await onHub.SubscribeCoreAsync<string>("new.on.hub");
        await onHub.PingAsync();
        await spoke.WaitForLinksAsync(1, "new.on.hub");
        await onHub.PublishAsync("kept", "after restart");
        Assert.Equal("after restart", (await kept.NextAsync()).Data);
        await onSpoke.PublishAsync("new.on.hub", "up again");
        Assert.Equal("up again", (await hubSub.NextAsync()).Data);
    }

    public static async Task CrossesBothWaysAsync(ILeafHubUnderTest hub, LeafSpoke spoke)
    {
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var spokeSub = await onSpoke.SubscribeCoreAsync<string>("to.spoke");
        await using var hubSub = await onHub.SubscribeCoreAsync<string>("to.hub.>");
        await using var member1 = await onSpoke.SubscribeCoreAsync<string>("work", queueGroup: "workers");
        await using var member2 = await onSpoke.SubscribeCoreAsync<string>("work", queueGroup: "workers");
        await onSpoke.PingAsync();
        await onHub.PingAsync();
        await hub.WaitForLinksAsync(1, "to.spoke", "work");
        await spoke.WaitForLinksAsync(1, "to.hub.>");

        await onHub.PublishAsync("to.spoke", "down", headers: new NatsHeaders { ["X-Leaf"] = "down" });
        var down = await spokeSub.NextAsync();
        Assert.Equal(("down", "down"), (down.Data, down.Headers?["X-Leaf"].ToString()));

        await onSpoke.PublishAsync("to.hub.a", "up", headers: new NatsHeaders { ["X-Leaf"] = "up" });
        var up = await hubSub.NextAsync();
        Assert.Equal(("to.hub.a", "up", "up"), (up.Subject, up.Data, up.Headers?["X-Leaf"].ToString()));

        for (var i = 0; i < 20; i++)
        {
            await onHub.PublishAsync("work", "job-" + i);
        }

        await onHub.PingAsync();
        Assert.True(await Eventually.TrueAsync(() => member1.Msgs.Count + member2.Msgs.Count >= 20), $"received {member1.Msgs.Count + member2.Msgs.Count} of 20");

        // A duplicate would arrive behind a round trip through the link.
        await onHub.PublishAsync("to.spoke", "last");
        Assert.Equal("last", (await spokeSub.NextAsync()).Data);
        Assert.Equal(20, member1.Msgs.Count + member2.Msgs.Count);
    }
}
