using Broker.Core.Auth;

namespace Broker.Bus.Tests;

/// <summary>
/// <see cref="Broker.Abstractions.IBusConnection.MayReceive"/>: the user's subscribe permissions for one literal subject,
/// deny entries included, for messages an adapter delivers without the bus (MQTT retained messages).
/// </summary>
public sealed class BusConnectionMayReceiveTests
{
    [Fact(Timeout = 60_000)]
    public async Task Allow_and_deny_entries_decide_and_full_permissions_receive_everything()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.Authorization.Users =
        [
            new UserOptions
            {
                User = "reader",
                Password = "pw",
                Permissions = new() { Subscribe = new() { Allow = ["r.>", "r"], Deny = ["r.secret", "r.*.hidden"] } },
            },
            new UserOptions { User = "all", Password = "pw" },
        ]);
        await using var _ = broker;

        await using var readerPeer = await harness.ConnectAsync(broker);
        var reader = (await readerPeer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "reader", Password = "pw" })).Connection!;
        await using var allPeer = await harness.ConnectAsync(broker);
        var all = (await allPeer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "all", Password = "pw" })).Connection!;
        try
        {
            Assert.True(reader.MayReceive("r"));
            Assert.True(reader.MayReceive("r.open"));
            Assert.True(reader.MayReceive("r.x.open"));
            Assert.False(reader.MayReceive("r.secret"));
            Assert.False(reader.MayReceive("r.x.hidden"));
            Assert.False(reader.MayReceive("other"));
            Assert.True(all.MayReceive("r.secret"));
        }
        finally
        {
            await reader.DisposeAsync();
            await all.DisposeAsync();
        }
    }
}
