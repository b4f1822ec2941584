using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using static Broker.Security.Tests.ResolverTests;

namespace Broker.Security.Tests;

/// <summary>
/// An account's JetStream is set up before the change that gives it JetStream completes, as nats-server 2.9.10 does:
/// the first CONNECT of an operator-mode account's user (its first request, <c>$JS.API.INFO</c>, is answered), the
/// answer to a claims update that enables JetStream (the next request finds the limits), and (ours only: the test kit
/// cannot reload nats-server) a configuration reload that adds an account with JetStream. Each 200 times on one
/// server, a new account each time, so a race between the change and its setup would show as "no responders" or as
/// the old answer.
/// </summary>
public sealed class AccountSetupTests : IDisposable
{
    private const int Iterations = 200;
    private readonly string directory = Directory.CreateTempSubdirectory("broker-account-setup-").FullName;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Theory(Timeout = 300_000)]
    [MemberData(nameof(Servers))]
    public async Task The_first_request_of_a_new_jwt_accounts_first_user_finds_its_JetStream(ServerKind kind)
    {
        var op = new TestOperator();
        await using var server = await JetStreamSecurityServer.StartFullResolverAsync(kind, op, Path.Combine(directory, kind.ToString()));
        await using var sys = await server.ConnectAsync(op.SystemAccount, "sys");
        for (var i = 0; i < Iterations; i++)
        {
            // Stored by the resolver only: the account is registered by its user's CONNECT below.
            var account = op.CreateAccount(c => EnableJetStream(c, streams: 3));
            Assert.Equal((200, account.GetPublicKey(), "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()])));
            await using var client = await server.ConnectAsync(account);
            using var info = JsonDocument.Parse(await RequestAsync(client, "$JS.API.INFO", string.Empty));
            Assert.Equal(3, info.RootElement.GetProperty("limits").GetProperty("max_streams").GetInt32());
        }
    }

    [Theory(Timeout = 300_000)]
    [MemberData(nameof(Servers))]
    public async Task A_claims_update_that_enables_JetStream_is_answered_once_the_account_has_it(ServerKind kind)
    {
        var op = new TestOperator();
        await using var server = await JetStreamSecurityServer.StartFullResolverAsync(kind, op, Path.Combine(directory, kind.ToString()));
        await using var sys = await server.ConnectAsync(op.SystemAccount, "sys");
        for (var i = 0; i < Iterations; i++)
        {
            var account = op.CreateAccount();
            var key = account.GetPublicKey();
            Assert.Equal((200, key, "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[key])));
            await using var client = await server.ConnectAsync(account);
            using (var disabled = JsonDocument.Parse(await RequestAsync(client, "$JS.API.INFO", string.Empty)))
            {
                Assert.Equal(10039, disabled.RootElement.GetProperty("error").GetProperty("err_code").GetInt32());
            }

            var enabled = op.AddAccount(account, c => EnableJetStream(c, streams: 4));
            Assert.Equal((200, key, "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", enabled)));
            using var info = JsonDocument.Parse(await RequestAsync(client, "$JS.API.INFO", string.Empty));
            Assert.Equal(4, info.RootElement.GetProperty("limits").GetProperty("max_streams").GetInt32());
        }
    }

    [Fact(Timeout = 300_000)]
    public async Task A_reload_that_adds_an_account_with_JetStream_returns_once_its_API_answers()
    {
        await using var server = await JetStreamSecurityServer.StartAsync(ServerKind.Ours, o => o.Accounts = [Account(0)], string.Empty);
        var broker = server.Ours!;
        for (var i = 1; i <= Iterations; i++)
        {
            // The account before is removed and a new one added: JetStream stops one and starts the other.
            var reloaded = new BrokerOptions { Host = "127.0.0.1", Port = broker.Port, Accounts = [Account(i)] };
            Assert.True((await broker.Server.ReloadAsync(reloaded)).Succeeded);
            await using var client = await NatsClients.ConnectAsync(broker.Url, "user", o => o.WithUser("u" + i, "p"));
            using var info = JsonDocument.Parse(await RequestAsync(client, "$JS.API.INFO", string.Empty));
            Assert.Equal(i, info.RootElement.GetProperty("limits").GetProperty("max_streams").GetInt32());
        }

        static AccountOptions Account(int i) => new()
        {
            Name = "A" + i,
            Users = [new UserOptions { User = "u" + i, Password = "p" }],
            JetStream = new AccountJetStreamOptions { MaxStreams = i == 0 ? 1 : i },
        };
    }

    /// <summary>JetStream limits in an account JWT: storage limits enable it (nats-server reads no storage as disabled).</summary>
    private static void EnableJetStream(Broker.Core.Internal.Jwt.AccountClaims claims, int streams)
    {
        claims.Nats.Limits.MemoryStorage = 1_048_576;
        claims.Nats.Limits.DiskStorage = 1_048_576;
        claims.Nats.Limits.Streams = streams;
        claims.Nats.Limits.Consumers = -1;
    }
}
