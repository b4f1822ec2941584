using Broker.Core;
using Broker.TestKit;

namespace Broker.Protocol.Tests;

/// <summary>Configuration reload on a running broker, felt by connections that stay connected.</summary>
public sealed class ReloadTests
{
    private static BrokerOptions Options(Action<BrokerOptions> configure)
    {
        var options = new BrokerOptions { Host = "127.0.0.1", Port = 0 };
        configure(options);
        return options;
    }

    private static void Users(BrokerOptions o, string[] bobPublish, string bobPassword = "pw")
    {
        o.Authorization.Users.Add(new() { User = "alice", Password = "secret" });
        o.Authorization.Users.Add(new() { User = "bob", Password = bobPassword, Permissions = new() { Publish = new() { Allow = [.. bobPublish] }, Subscribe = new() { Allow = ["in.>"] } } });
    }

    private static async Task<RawClient> ConnectAsBobAsync(TestBroker broker, string password = "pw")
    {
        var client = await RawClient.ConnectAsync(broker.EndPoint);
        await client.SendAsync($"CONNECT {{\"user\":\"bob\",\"pass\":\"{password}\",\"verbose\":false}}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        return client;
    }

    private static BrokerOptions Reconfigured(TestBroker broker, Action<BrokerOptions> configure)
    {
        var options = Options(configure);
        options.Port = broker.Port;
        return options;
    }

    [Fact]
    public async Task Permission_change_is_felt_by_a_live_connection_without_reconnecting()
    {
        await using var broker = await TestBroker.StartAsync(o => Users(o, ["foo", "bar"]));
        await using var bob = await ConnectAsBobAsync(broker);
        await bob.SendAsync("PUB foo 1\r\nx\r\n");
        Assert.Equal(["PONG"], (await bob.PingAndCollectAsync()).Lines);

        var result = await broker.Server.ReloadAsync(Reconfigured(broker, o => Users(o, ["bar"])));
        Assert.True(result.Succeeded, result.Error);
        Assert.Equal(["authorization"], result.Applied);

        await bob.SendAsync("PUB foo 1\r\nx\r\nPUB bar 1\r\nx\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"foo\"'", "PONG"], (await bob.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task Nkey_user_keeps_its_connection_while_its_key_stays_and_loses_it_when_removed()
    {
        using var alice = NATS.NKeys.KeyPair.CreatePair(NATS.NKeys.PrefixByte.User);
        void WithAlice(BrokerOptions o, string publish)
        {
            o.Authorization.Users.Add(new() { Nkey = alice.GetPublicKey(), Permissions = new() { Publish = new() { Allow = [publish] } } });
            o.Authorization.Users.Add(new() { User = "bob", Password = "pw" });
        }

        await using var broker = await TestBroker.StartAsync(o => WithAlice(o, "foo"));
        await using var client = await RawClient.ConnectAsync(broker.EndPoint);
        var nonce = System.Text.Json.JsonDocument.Parse(client.Info!["INFO ".Length..]).RootElement.GetProperty("nonce").GetString()!;
        var signature = new byte[64];
        alice.Sign(System.Text.Encoding.ASCII.GetBytes(nonce), signature);
        await client.SendAsync($"CONNECT {{\"nkey\":\"{alice.GetPublicKey()}\",\"sig\":\"{System.Buffers.Text.Base64Url.EncodeToString(signature)}\",\"verbose\":false}}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        // New permissions for the same key apply to the live connection.
        var changed = await broker.Server.ReloadAsync(Reconfigured(broker, o => WithAlice(o, "bar")));
        Assert.True(changed.Succeeded, changed.Error);
        Assert.Contains(broker.Logs.Entries, e => e.Message == "Reloaded: authorization nkey users");
        await client.SendAsync("PUB foo 1\r\nx\r\nPUB bar 1\r\nx\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"foo\"'", "PONG"], (await client.PingAndCollectAsync()).Lines);

        // Without its key the user is gone: closed as nats-server closes it (clientHasMovedToDifferentAccount), without -ERR.
        var removed = await broker.Server.ReloadAsync(Reconfigured(broker, o => o.Authorization.Users.Add(new() { User = "bob", Password = "pw" })));
        Assert.True(removed.Succeeded, removed.Error);
        Assert.Empty(await client.ExpectClosedAsync());
    }

    [Fact]
    public async Task Subscriptions_no_longer_allowed_are_removed_with_an_error()
    {
        await using var broker = await TestBroker.StartAsync(o => Users(o, ["out.>"]));
        await using var bob = await ConnectAsBobAsync(broker);
        await bob.SendAsync("SUB in.a 1\r\nSUB in.b 2\r\n");
        Assert.Equal(["PONG"], (await bob.PingAndCollectAsync()).Lines);

        var result = await broker.Server.ReloadAsync(Reconfigured(broker, o =>
        {
            Users(o, ["out.>"]);
            o.Authorization.Users[1].Permissions!.Subscribe = new() { Allow = ["in.a"] };
        }));
        Assert.True(result.Succeeded, result.Error);
        Assert.Equal("-ERR 'Permissions Violation for Subscription to \"in.b\" (sid \"2\")'", await bob.ReadLineAsync());

        await using var alice = await RawClient.ConnectAsync(broker.EndPoint);
        await alice.SendAsync("CONNECT {\"user\":\"alice\",\"pass\":\"secret\",\"verbose\":false}\r\nPUB in.b 1\r\nx\r\nPUB in.a 1\r\ny\r\n");
        await alice.PingAndCollectAsync();
        Assert.Equal(["MSG in.a 1 1", "y", "PONG"], (await bob.PingAndCollectAsync()).Lines);
    }

    [Fact]
    public async Task Removed_user_or_changed_password_closes_the_connection()
    {
        await using var broker = await TestBroker.StartAsync(o => Users(o, ["foo"]));
        await using var bob = await ConnectAsBobAsync(broker);
        await using var alice = await RawClient.ConnectAsync(broker.EndPoint);
        await alice.SendAsync("CONNECT {\"user\":\"alice\",\"pass\":\"secret\",\"verbose\":false}\r\n");
        await alice.PingAndCollectAsync();

        var result = await broker.Server.ReloadAsync(Reconfigured(broker, o => Users(o, ["foo"], bobPassword: "new")));
        Assert.True(result.Succeeded, result.Error);
        Assert.Equal(["-ERR 'Authorization Violation'"], await bob.ExpectClosedAsync());

        // alice's credentials did not change: she stays.
        Assert.Equal(["PONG"], (await alice.PingAndCollectAsync()).Lines);

        // New connections meet the new password.
        await using var again = await ConnectAsBobAsync(broker, "new");
    }

    [Fact]
    public async Task Setting_that_needs_a_restart_refuses_the_whole_reload()
    {
        await using var broker = await TestBroker.StartAsync(o => o.MaxPayload = 1000);
        var next = Reconfigured(broker, o => o.MaxPayload = 10);
        next.ServerName = "renamed";
        var result = await broker.Server.ReloadAsync(next);
        Assert.False(result.Succeeded);
        Assert.Contains("server_name", result.Error, StringComparison.Ordinal);

        // Nothing was applied: the old max_payload still holds.
        await using var client = await RawClient.ConnectAsync(broker.EndPoint);
        Assert.Contains("\"max_payload\":1000", client.Info, StringComparison.Ordinal);
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nPUB foo 20\r\n01234567890123456789\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
    }

    [Fact]
    public async Task Limits_change_for_live_connections()
    {
        await using var broker = await TestBroker.StartAsync(o => o.MaxPayload = 1000);
        await using var client = await RawClient.ConnectAsync(broker.EndPoint);
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
        await client.PingAndCollectAsync();

        var result = await broker.Server.ReloadAsync(Reconfigured(broker, o => o.MaxPayload = 10));
        Assert.True(result.Succeeded, result.Error);
        Assert.Equal(["max_payload"], result.Applied);

        await client.SendAsync("PUB foo 20\r\n");
        Assert.Equal(["-ERR 'Maximum Payload Violation'"], await client.ExpectClosedAsync());
        await using var fresh = await RawClient.ConnectAsync(broker.EndPoint);
        Assert.Contains("\"max_payload\":10", fresh.Info, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Invalid_configuration_is_refused_and_nothing_changes()
    {
        await using var broker = await TestBroker.StartAsync(o => Users(o, ["foo"]));
        var result = await broker.Server.ReloadAsync(Reconfigured(broker, o =>
        {
            Users(o, ["foo"]);
            o.Authorization.NoAuthUser = "nobody";
        }));
        Assert.False(result.Succeeded);
        Assert.Contains("no_auth_user", result.Error, StringComparison.Ordinal);
        await using var bob = await ConnectAsBobAsync(broker);
    }
}
