using Broker.Core.Auth;

namespace Broker.Protocol.Tests;

/// <summary>
/// A connection that authenticates again (a second CONNECT) after it was bound to an account: ours only, because
/// nats-server, which keeps the place the same way, leaves the subscriptions of a connection moving to another account
/// in the old account's index, where they keep receiving (checked by hand on 2.9.10).
/// </summary>
public sealed class AccountBindingTests
{
    private static UserOptions User(string name) => new() { User = name, Password = name };

    private static string Connect(string user) => $"CONNECT {{\"user\":\"{user}\",\"pass\":\"{user}\",\"verbose\":false}}\r\n";

    [Fact(Timeout = 30_000)]
    public async Task Second_connect_in_the_same_account_keeps_its_place()
    {
        await using var broker = await TestBroker.StartAsync(o =>
            o.Accounts.Add(new AccountOptions { Name = "A", Users = [User("a"), User("a2")], Limits = new() { MaxConnections = 1 } }));
        await using var client = await RawClient.ConnectAsync(broker.EndPoint);
        await client.SendAsync(Connect("a") + "SUB news 1\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        await client.SendAsync(Connect("a2") + "PUB news 1\r\nx\r\n");
        Assert.Equal(["MSG news 1 1", "x", "PONG"], (await client.PingAndCollectAsync()).Lines);

        // Still one place taken: another connection of A is refused, and the place comes back on close.
        await using var refused = await RawClient.ConnectAsync(broker.EndPoint);
        await refused.SendAsync(Connect("a") + "PING\r\n");
        Assert.Equal(["-ERR 'maximum account active connections exceeded'"], await refused.ExpectClosedAsync());
        await client.DisposeAsync();
        await Eventually.AssertAsync(
            async () =>
            {
                await using var next = await RawClient.ConnectAsync(broker.EndPoint);
                await next.SendAsync(Connect("a"));
                return (await next.PingAndCollectAsync()).Lines.SequenceEqual(["PONG"]);
            },
            "A's place to come back");
    }

    [Fact(Timeout = 30_000)]
    public async Task Second_connect_into_another_account_leaves_the_first_accounts_subscriptions_behind()
    {
        await using var broker = await TestBroker.StartAsync(o =>
        {
            o.Accounts.Add(new AccountOptions { Name = "A", Users = [User("a"), User("a2")], Limits = new() { MaxConnections = 1 } });
            o.Accounts.Add(new AccountOptions { Name = "B", Users = [User("b")] });
        });
        await using var client = await RawClient.ConnectAsync(broker.EndPoint);
        await client.SendAsync(Connect("a") + "SUB news 1\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        await client.SendAsync(Connect("b") + "SUB news 2\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        // A's publish reaches nobody (the subscription made in A is gone), B's reaches the new one only.
        await using var a2 = await RawClient.ConnectAsync(broker.EndPoint);
        await a2.SendAsync(Connect("a2") + "PUB news 1\r\na\r\n");
        Assert.Equal(["PONG"], (await a2.PingAndCollectAsync()).Lines);
        await client.SendAsync("PUB news 1\r\nb\r\n");
        Assert.Equal(["MSG news 2 1", "b", "PONG"], (await client.PingAndCollectAsync()).Lines);
    }
}
