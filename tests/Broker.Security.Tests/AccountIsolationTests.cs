using Broker.Core;
using Broker.Core.Auth;
using NATS.Client.Core;

namespace Broker.Security.Tests;

/// <summary>
/// Accounts as isolated subject spaces, through NATS.Client.Core on our broker and nats-server 2.9.10 with the same
/// two accounts: a message published in one account never reaches a subscriber of another, whatever its subject or
/// wildcard, a request finds no responder across accounts, and <c>no_auth_user</c> binds into its user's account.
/// </summary>
public sealed class AccountIsolationTests
{
    // Two users per account, so a test can publish and subscribe in the same account on separate connections.
    internal const string Conf = """
        accounts {
          A: { users: [{user: a, password: a}, {user: a2, password: a2}] }
          B: { users: [{user: b, password: b}, {user: b2, password: b2}] }
        }
        """;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    internal static void TwoAccounts(BrokerOptions options)
    {
        options.Accounts.Add(new AccountOptions { Name = "A", Users = [User("a"), User("a2")] });
        options.Accounts.Add(new AccountOptions { Name = "B", Users = [User("b"), User("b2")] });
    }

    internal static UserOptions User(string name) => new() { User = name, Password = name };

    /// <summary>A NATS.Client.Core connection of the configured user <paramref name="user"/> (its password is its name).</summary>
    internal static Task<NatsConnection> ConnectAsync(ServerUnderTest server, string user) =>
        NatsClients.ConnectAsync(server.Url, user, o => o.WithUser(user, user));

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Publish_in_one_account_reaches_only_that_accounts_subscribers(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, TwoAccounts, Conf);
        await using var publisherA = await ConnectAsync(server, "a");
        await using var subscriberA = await ConnectAsync(server, "a2");
        await using var subscriberB = await ConnectAsync(server, "b");
        await using var publisherB = await ConnectAsync(server, "b2");

        await using var inA = await subscriberA.SubscribeCoreAsync<string>("orders.new");
        await using var inB = await subscriberB.SubscribeCoreAsync<string>("orders.new");
        await using var everythingInB = await subscriberB.SubscribeCoreAsync<string>(">");
        await subscriberA.PingAsync();
        await subscriberB.PingAsync();

        await publisherA.PublishAsync("orders.new", "from A");
        await publisherA.PingAsync();
        Assert.Equal("from A", (await inA.NextAsync()).Data);

        // B's subscribers are live (B's own publish reaches them), and A's message is not ahead of it.
        await publisherB.PublishAsync("orders.new", "from B");
        Assert.Equal("from B", (await inB.NextAsync()).Data);
        Assert.Equal("from B", (await everythingInB.NextAsync()).Data);
        await subscriberB.PingAsync();
        Assert.True(inB.IsEmpty());
        Assert.True(everythingInB.IsEmpty());

        // And B's publish did not reach A.
        await subscriberA.PingAsync();
        Assert.True(inA.IsEmpty());
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Request_finds_no_responder_in_another_account(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, TwoAccounts, Conf);
        await using var responder = await ConnectAsync(server, "a");
        await using var requesterA = await ConnectAsync(server, "a2");
        await using var requesterB = await ConnectAsync(server, "b");
        await using var service = await responder.SubscribeCoreAsync<string>("svc.time");
        await responder.PingAsync();
        var serving = Task.Run(async () =>
        {
            await foreach (var request in service.Msgs.ReadAllAsync())
            {
                await request.ReplyAsync("A's answer to " + request.Data);
            }
        });

        // Within A the service answers; from B nobody is there: 503 no responders at once.
        var reply = await requesterA.RequestAsync<string, string>("svc.time", "a2");
        Assert.Equal("A's answer to a2", reply.Data);
        await Assert.ThrowsAsync<NatsNoRespondersException>(async () =>
            await requesterB.RequestAsync<string, string>("svc.time", "b", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(10) }));

        await service.UnsubscribeAsync();
        await serving.WaitAsync(NatsClients.Timeout);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task No_auth_user_binds_an_anonymous_client_into_its_users_account(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                TwoAccounts(o);
                o.Authorization.NoAuthUser = "b2";
            },
            Conf + "\nno_auth_user: b2\n");
        await using (var raw = await server.ConnectAsync())
        {
            // Nobody has to authenticate now, so INFO does not ask for it.
            Assert.DoesNotContain("auth_required", raw.Info, StringComparison.Ordinal);
        }

        await using var anonymous = await NatsClients.ConnectAsync(server.Url, "anonymous");
        await using var subscriberA = await ConnectAsync(server, "a");
        await using var subscriberB = await ConnectAsync(server, "b");
        await using var inA = await subscriberA.SubscribeCoreAsync<string>("greeting");
        await using var inB = await subscriberB.SubscribeCoreAsync<string>("greeting");
        await subscriberA.PingAsync();
        await subscriberB.PingAsync();

        await anonymous.PublishAsync("greeting", "hello");
        Assert.Equal("hello", (await inB.NextAsync()).Data);

        await subscriberA.PingAsync();
        Assert.True(inA.IsEmpty());

        // And the anonymous client subscribes in B too: A's publish does not reach it, B's does.
        await using var anonymousIn = await anonymous.SubscribeCoreAsync<string>("greeting");
        await anonymous.PingAsync();
        await subscriberA.PublishAsync("greeting", "from A");
        await subscriberA.PingAsync();
        await subscriberB.PublishAsync("greeting", "from B");
        Assert.Equal("from B", (await anonymousIn.NextAsync()).Data);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Accounts_with_users_require_authentication(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, TwoAccounts, Conf);
        await using var client = await server.ConnectAsync();
        Assert.Contains("\"auth_required\":true", client.Info, StringComparison.Ordinal);
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
        Assert.Equal(["-ERR 'Authorization Violation'"], await client.ExpectClosedAsync());
    }
}
