using Broker.TestKit;
using NATS.Client.Core;

namespace Broker.Host.Tests.Process;

/// <summary>
/// Accounts from a configuration file, given to the real host and to nats-server 2.9.10: users of two accounts
/// subscribe to the same subjects, and each sees only the publishes of its own account; <c>no_auth_user</c> puts
/// anonymous clients into an account. A reload adds an account and its user to the running host.
/// </summary>
public sealed class AccountsConfTests : IDisposable
{
    private const string Accounts = """
        accounts {
          A: { users: [ { user: a, password: pa } ] }
          B: {
            users: [ { user: b, password: pb } ]
            limits: { max_connections: 5, max_subscriptions: 10, max_payload: 64KB }
          }
        }
        no_auth_user: b
        """;

    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(10);

    private readonly TempDirectory directory = new("broker-accounts-conf-");

    public void Dispose() => directory.Dispose();

    [Fact(Timeout = 90_000)]
    public async Task Users_of_two_accounts_see_only_their_own_accounts_publishes_as_on_nats_server()
    {
        string expected;
        await using (var reference = await ReferenceServer.StartAsync(Accounts))
        {
            expected = await ExchangeAsync(reference.Url);
        }

        Assert.Equal("A got orders.a | B got orders.b, orders.anon, orders.end", expected);

        await using var ours = await HostProcess.StartReadyAsync(["-c", directory.Write("broker.conf", Accounts)]);
        var actual = await ExchangeAsync($"nats://{ours.EndPoint("client")}");

        Assert.Equal(expected, actual);
    }

    [Fact(Timeout = 90_000)]
    public async Task A_reload_adds_an_account_and_its_user_while_the_others_stay_connected()
    {
        var conf = directory.Write("broker.conf", Accounts);
        await using var host = await HostProcess.StartReadyAsync(["-c", conf]);
        var url = $"nats://{host.EndPoint("client")}";
        await using var a = await ConnectAsync(url, "a", "pa");
        await using var aSubscription = await a.SubscribeCoreAsync<string>("orders.>");
        await a.PingAsync();

        File.WriteAllText(conf, Accounts.Replace("accounts {", "accounts {\n  C: { users: [ { user: c, password: pc } ] }", StringComparison.Ordinal));
        var seen = host.Lines.Count;
        await host.SignalAsync("HUP");
        await host.WaitForLineAsync("[INF] Reloaded server configuration", HostProcess.StartTimeout, seen);
        Assert.Contains(host.Lines.Skip(seen), l => l.EndsWith("[INF] Reloaded: accounts", StringComparison.Ordinal));

        // The new user connects into its new account; a's connection, untouched, sees none of C's publishes.
        await using var c = await ConnectAsync(url, "c", "pc");
        await using var cSubscription = await c.SubscribeCoreAsync<string>("orders.>");
        await c.PingAsync();
        await c.PublishAsync("orders.c", "c");
        await c.PingAsync();
        await a.PublishAsync("orders.a", "a");
        await a.PingAsync();

        Assert.Equal("orders.c", await FirstSubjectAsync(cSubscription));
        Assert.Equal("orders.a", await FirstSubjectAsync(aSubscription));
    }

    // a and b subscribe to orders.>; b, an anonymous client (no_auth_user: b) and a publish one after another, each
    // waiting for its PONG, so a delivery across accounts would arrive before the subscriber's own account's message.
    private static async Task<string> ExchangeAsync(string url)
    {
        await using var a = await ConnectAsync(url, "a", "pa");
        await using var b = await ConnectAsync(url, "b", "pb");
        await using var anonymous = await ConnectAsync(url, null, null);
        await using var aSubscription = await a.SubscribeCoreAsync<string>("orders.>");
        await using var bSubscription = await b.SubscribeCoreAsync<string>("orders.>");
        await a.PingAsync();
        await b.PingAsync();

        await b.PublishAsync("orders.b", "b");
        await b.PingAsync();
        await anonymous.PublishAsync("orders.anon", "anon");
        await anonymous.PingAsync();
        await a.PublishAsync("orders.a", "a");
        await a.PingAsync();
        await b.PublishAsync("orders.end", "end");
        await b.PingAsync();

        var aGot = await FirstSubjectAsync(aSubscription);
        List<string> bGot = [await FirstSubjectAsync(bSubscription), await FirstSubjectAsync(bSubscription), await FirstSubjectAsync(bSubscription)];
        return $"A got {aGot} | B got {string.Join(", ", bGot)}";
    }

    private static async Task<NatsConnection> ConnectAsync(string url, string? user, string? password)
    {
        var auth = user is null ? NatsAuthOpts.Default : new NatsAuthOpts { Username = user, Password = password };
        var connection = new NatsConnection(new NatsOpts { Url = url, AuthOpts = auth, Name = user ?? "anonymous" });
        try
        {
            await connection.ConnectAsync();
            return connection;
        }
        catch
        {
            await connection.DisposeAsync();
            throw;
        }
    }

    private static async Task<string> FirstSubjectAsync(INatsSub<string> subscription)
    {
        using var timeout = new CancellationTokenSource(Wait);
        return (await subscription.Msgs.ReadAsync(timeout.Token)).Subject;
    }
}
