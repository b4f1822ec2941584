using System.Text.Json;
using Broker.Core.Internal.Jwt;
using NATS.Client.Core;
using NATS.NKeys;
using static Broker.Security.Tests.ResolverServiceImportTests;
using static Broker.Security.Tests.ResolverTests;

namespace Broker.Security.Tests;

/// <summary>
/// The system account's own JWT exports and imports, the same on our broker and nats-server 2.9.10
/// (<c>updateAccountClaimsWithRefresh</c> re-adds the system exports, then takes the JWT's exports and imports as for
/// any account): an account imports its own connect events (<c>$SYS.ACCOUNT.*.CONNECT</c>, exported with its
/// account in token 3), a stream and a service of the system account; the system account imports a stream and a
/// service of that account; the system imports every account gets keep working beside them.
/// </summary>
public sealed class SystemAccountJwtTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-sysjwt-").FullName;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    private static ExportClaim Export(string type, string subject, uint tokenPosition = 0) =>
        new() { Name = subject, Subject = subject, Type = type, AccountTokenPosition = tokenPosition };

    private static ImportClaim Import(string type, KeyPair from, string subject) =>
        new() { Name = subject, Subject = subject, Account = from.GetPublicKey(), Type = type };

    // Answers every request on the subject with "<subject>:<data>" until cancelled.
    private static async Task<Task> RespondAsync(NatsConnection connection, string subject, CancellationToken cancel)
    {
        var sub = await connection.SubscribeCoreAsync<string>(subject, cancellationToken: cancel);
        await connection.PingAsync(cancel);
        return Task.Run(
            async () =>
            {
                await using (sub)
                {
                    await foreach (var request in sub.Msgs.ReadAllAsync(cancel))
                    {
                        await request.ReplyAsync(request.Subject + ":" + request.Data, cancellationToken: cancel);
                    }
                }
            },
            cancel);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task The_system_accounts_jwt_exports_and_imports_apply_beside_its_system_exports(ServerKind kind)
    {
        var op = new TestOperator();
        var account = TestJwt.NewKey(PrefixByte.Account);
        var key = account.GetPublicKey();
        op.AddAccount(op.SystemAccount, c =>
        {
            c.Name = "SYS";
            c.Nats.Exports = [Export("stream", "$SYS.ACCOUNT.*.CONNECT", tokenPosition: 3), Export("stream", "sys.news.>"), Export("service", "sys.echo")];
            c.Nats.Imports = [Import("stream", account, "a.news.>"), Import("service", account, "a.echo")];
        });
        op.AddAccount(account, c =>
        {
            c.Nats.Exports = [Export("stream", "a.news.>"), Export("service", "a.echo")];
            c.Nats.Imports =
            [
                Import("stream", op.SystemAccount, $"$SYS.ACCOUNT.{key}.CONNECT"),
                Import("stream", op.SystemAccount, "sys.news.>"),
                Import("service", op.SystemAccount, "sys.echo"),
            ];
        });
        await using var server = await OperatorModeTests.StartAsync(kind, op);
        await using var sys = await ConnectSystemAsync(server, op);
        await using var user = await ConnectUserAsync(server, account, "user");
        using var cancel = new CancellationTokenSource(NatsClients.Timeout * 4);
        var sysResponder = await RespondAsync(sys, "sys.echo", cancel.Token);
        var userResponder = await RespondAsync(user, "a.echo", cancel.Token);
        await using var connects = await user.SubscribeCoreAsync<string>($"$SYS.ACCOUNT.{key}.CONNECT");
        await using var sysNews = await user.SubscribeCoreAsync<string>("sys.news.>");
        await using var accountNews = await sys.SubscribeCoreAsync<string>("a.news.>");
        await user.PingAsync();
        await sys.PingAsync();

        await using (var second = await ConnectUserAsync(server, account, "second"))
        {
            await second.PingAsync();
        }

        // The first user's own event may come first.
        while (true)
        {
            using var connect = JsonDocument.Parse((await connects.Msgs.ReadAsync(cancel.Token)).Data!);
            Assert.Equal("io.nats.server.advisory.v1.client_connect", connect.RootElement.GetProperty("type").GetString());
            if (connect.RootElement.GetProperty("client").GetProperty("name").GetString() == "second")
            {
                break;
            }
        }

        await sys.PublishAsync("sys.news.1", "from sys");
        await user.PublishAsync("a.news.1", "from a");
        var fromSys = await sysNews.Msgs.ReadAsync(cancel.Token);
        var fromAccount = await accountNews.Msgs.ReadAsync(cancel.Token);
        Assert.Equal(("sys.news.1", "from sys"), (fromSys.Subject, fromSys.Data));
        Assert.Equal(("a.news.1", "from a"), (fromAccount.Subject, fromAccount.Data));

        Assert.Equal("sys.echo:1", await AskAsync(user, "sys.echo", "1"));
        Assert.Equal("a.echo:2", await AskAsync(sys, "a.echo", "2"));

        // The system import of every account still answers with the account's own connections.
        using var connz = JsonDocument.Parse(await AskAsync(user, "$SYS.REQ.SERVER.PING.CONNZ", string.Empty));
        Assert.Equal(["user"], connz.RootElement.GetProperty("data").GetProperty("connections").EnumerateArray().Select(c => c.GetProperty("name").GetString() ?? string.Empty).ToArray());

        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => sysResponder);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => userResponder);
    }

    // Streamed: with the export not applied, the importer would get the first response only (a singleton's).
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_claims_update_of_the_system_account_adds_its_streamed_export_to_an_importer(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount(c => c.Nats.Imports = [Import("service", op.SystemAccount, "sys.feed")]);
        await using var server = await StartResolverAsync(kind, op, Path.Combine(directory, kind.ToString()));
        await using var sys = await ConnectSystemAsync(server, op);
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        await using var requests = await sys.SubscribeCoreAsync<string>("sys.feed");
        await sys.PingAsync();
        await using var user = await ConnectUserAsync(server, account, "user");
        await Assert.ThrowsAsync<NatsNoRespondersException>(() => AskAsync(user, "sys.feed", "before"));

        var updated = op.AddAccount(op.SystemAccount, c =>
        {
            c.Name = "SYS";
            c.Nats.Exports = [new ExportClaim { Name = "feed", Subject = "sys.feed", Type = "service", ResponseType = "Stream" }];
        });
        Assert.Equal((200, op.SystemAccount.GetPublicKey(), "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", updated)));

        var inbox = user.NewInbox();
        await using var replies = await user.SubscribeCoreAsync<string>(inbox);
        await user.PingAsync();
        await user.PublishAsync("sys.feed", "go", replyTo: inbox);
        using var cancel = new CancellationTokenSource(NatsClients.Timeout);
        var request = await requests.Msgs.ReadAsync(cancel.Token);
        await sys.PublishAsync(request.ReplyTo!, "1");
        await sys.PublishAsync(request.ReplyTo!, "2");
        Assert.Equal("1", (await replies.Msgs.ReadAsync(cancel.Token)).Data);
        Assert.Equal("2", (await replies.Msgs.ReadAsync(cancel.Token)).Data);
    }
}
