using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;

namespace Broker.Protocol.Tests;

/// <summary>
/// A reload that adds, changes and removes accounts and their users, felt by live connections. What nats-server 2.9.10
/// does was checked by hand (SIGHUP with the same changes): a connection whose user is gone or now in another account
/// is closed without -ERR and /connz says "Client Closed"; a changed password is an Authorization Violation; the others
/// keep their account and subscriptions.
/// </summary>
public sealed class AccountReloadTests
{
    private static UserOptions User(string name) => new() { User = name, Password = name };

    private static AccountOptions Account(string name, params string[] users) => new() { Name = name, Users = [.. users.Select(User)] };

    /// <summary>A: a, a2; B: b; monitoring on, for the close reasons.</summary>
    private static void Initial(BrokerOptions o)
    {
        o.Monitoring.Host = "127.0.0.1";
        o.Monitoring.Port = 0;
        o.Accounts.Add(Account("A", "a", "a2"));
        o.Accounts.Add(Account("B", "b"));
    }

    private static BrokerOptions Reconfigured(TestBroker broker, Action<BrokerOptions> configure)
    {
        var options = new BrokerOptions { Host = "127.0.0.1", Port = broker.Port };
        configure(options);
        return options;
    }

    private static async Task<RawClient> ConnectAsync(TestBroker broker, string user, string? password = null, string then = "")
    {
        var client = await RawClient.ConnectAsync(broker.EndPoint);
        await client.SendAsync($"CONNECT {{\"user\":\"{user}\",\"pass\":\"{password ?? user}\",\"verbose\":false}}\r\n" + then);
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        return client;
    }

    private static ulong ClientId(RawClient client) =>
        JsonDocument.Parse(client.Info!["INFO ".Length..]).RootElement.GetProperty("client_id").GetUInt64();

    private static async Task<string?> ClosedReasonAsync(TestBroker broker, RawClient client)
    {
        var cid = ClientId(client);
        JsonElement? closed = null;
        await Eventually.AssertAsync(async () => (closed = await MonitorHttp.ConnectionAsync(broker, cid, "&state=closed")) is not null, "the closed connection in /connz");
        return closed!.Value.GetProperty("reason").GetString();
    }

    private static async Task<IReadOnlyList<string>?> ClosedWithinAsync(RawClient client)
    {
        try
        {
            return await client.ExpectClosedAsync(TimeSpan.FromMilliseconds(500));
        }
        catch (TimeoutException)
        {
            return null;
        }
    }

    private static async Task ReloadAsync(TestBroker broker, Action<BrokerOptions> configure)
    {
        var result = await broker.Server.ReloadAsync(Reconfigured(broker, configure));
        Assert.True(result.Succeeded, result.Error);
    }

    [Fact(Timeout = 30_000)]
    public async Task Added_account_and_user_leave_live_connections_receiving()
    {
        await using var broker = await TestBroker.StartAsync(Initial);
        await using var subscriber = await ConnectAsync(broker, "a2", then: "SUB news 1\r\n");
        await using var publisher = await ConnectAsync(broker, "a");

        await ReloadAsync(broker, o =>
        {
            Initial(o);
            o.Accounts.Add(Account("C", "c"));
        });

        // The new user is in the new account: its publish does not reach A.
        await using var c = await ConnectAsync(broker, "c", then: "PUB news 1\r\nc\r\n");
        await publisher.SendAsync("PUB news 1\r\na\r\n");
        Assert.Equal(["PONG"], (await publisher.PingAndCollectAsync()).Lines);
        Assert.Equal(["MSG news 1 1", "a", "PONG"], (await subscriber.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task Removed_user_is_closed_without_error_and_a_changed_password_is_a_violation()
    {
        await using var broker = await TestBroker.StartAsync(Initial);
        await using var a = await ConnectAsync(broker, "a", then: "SUB news 1\r\n");
        await using var a2 = await ConnectAsync(broker, "a2");
        await using var b = await ConnectAsync(broker, "b");

        await ReloadAsync(broker, o =>
        {
            Initial(o);
            o.Accounts[0].Users.RemoveAt(1);
            o.Accounts[1].Users[0].Password = "changed";
        });

        Assert.Empty(await a2.ExpectClosedAsync());
        Assert.Equal("Client Closed", await ClosedReasonAsync(broker, a2));
        Assert.Equal(["-ERR 'Authorization Violation'"], await b.ExpectClosedAsync());
        Assert.Equal("Authentication Failure", await ClosedReasonAsync(broker, b));

        // The user who stayed keeps its subscription.
        await using var again = await ConnectAsync(broker, "b", "changed", "PUB news 1\r\nb\r\n");
        await a.SendAsync("PUB news 1\r\na\r\n");
        Assert.Equal(["MSG news 1 1", "a", "PONG"], (await a.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task User_moved_to_another_account_is_closed_and_reconnects_into_it()
    {
        await using var broker = await TestBroker.StartAsync(Initial);
        await using var a = await ConnectAsync(broker, "a", then: "SUB news 1\r\n");
        await using var moving = await ConnectAsync(broker, "a2");
        await using var b = await ConnectAsync(broker, "b", then: "SUB news 1\r\n");

        await ReloadAsync(broker, o =>
        {
            Initial(o);
            o.Accounts[0].Users.RemoveAt(1);
            o.Accounts[1].Users.Add(User("a2"));
        });

        Assert.Empty(await moving.ExpectClosedAsync());
        Assert.Equal("Client Closed", await ClosedReasonAsync(broker, moving));

        await using var moved = await ConnectAsync(broker, "a2", then: "PUB news 5\r\nmoved\r\n");
        Assert.Equal(["MSG news 1 5", "moved", "PONG"], (await b.PingAndCollectAsync()).Lines);
        Assert.Equal(["PONG"], (await a.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task Removed_accounts_clients_are_closed_and_the_others_stay()
    {
        await using var broker = await TestBroker.StartAsync(Initial);
        await using var a = await ConnectAsync(broker, "a", then: "SUB news 1\r\n");
        await using var b = await ConnectAsync(broker, "b");

        await ReloadAsync(broker, o =>
        {
            Initial(o);
            o.Accounts.RemoveAt(1);
        });

        Assert.Empty(await b.ExpectClosedAsync());
        Assert.Equal("Client Closed", await ClosedReasonAsync(broker, b));
        await using var refused = await RawClient.ConnectAsync(broker.EndPoint);
        await refused.SendAsync("CONNECT {\"user\":\"b\",\"pass\":\"b\",\"verbose\":false}\r\nPING\r\n");
        Assert.Equal(["-ERR 'Authorization Violation'"], await refused.ExpectClosedAsync());

        await a.SendAsync("PUB news 1\r\na\r\n");
        Assert.Equal(["MSG news 1 1", "a", "PONG"], (await a.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task Lowered_account_limits_apply_to_live_connections()
    {
        await using var broker = await TestBroker.StartAsync(Initial);
        await using var first = await ConnectAsync(broker, "a");
        await using var second = await ConnectAsync(broker, "a2");
        await using var b = await ConnectAsync(broker, "b");

        await ReloadAsync(broker, o =>
        {
            Initial(o);
            o.Accounts[0].Limits = new AccountLimitOptions { MaxConnections = 1, MaxPayload = 10, MaxSubscriptions = 1 };
        });

        // One of A's two connections stays (we close beyond the limit; nats-server also closes the one at it).
        var closed = await Task.WhenAll(ClosedWithinAsync(first), ClosedWithinAsync(second));
        Assert.Single(closed, lines => lines is not null);
        Assert.Equal(["-ERR 'maximum account active connections exceeded'"], closed.Single(lines => lines is not null));
        var stayed = first.Closed ? second : first;
        Assert.Equal(["PONG"], (await stayed.PingAndCollectAsync()).Lines);

        // The one that stayed meets the lower subscription and payload limits; B does not.
        await stayed.SendAsync("SUB s 1\r\nSUB t 2\r\n");
        Assert.Equal(["-ERR 'maximum subscriptions exceeded'", "PONG"], (await stayed.PingAndCollectAsync()).Lines);
        await b.SendAsync("PUB x 11\r\n01234567890\r\n");
        Assert.Equal(["PONG"], (await b.PingAndCollectAsync()).Lines);
        await stayed.SendAsync("PUB x 11\r\n01234567890\r\n");
        Assert.Equal(["-ERR 'Maximum Payload Violation'"], await stayed.ExpectClosedAsync());

        // Its place came back: one connection of A again, not two.
        await using var again = await ConnectAsync(broker, "a");
        await using var beyond = await RawClient.ConnectAsync(broker.EndPoint);
        await beyond.SendAsync("CONNECT {\"user\":\"a2\",\"pass\":\"a2\",\"verbose\":false}\r\nPING\r\n");
        Assert.Equal(["-ERR 'maximum account active connections exceeded'"], await beyond.ExpectClosedAsync());
    }
}
