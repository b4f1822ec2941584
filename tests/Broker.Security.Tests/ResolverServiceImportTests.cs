using System.Text.Json;
using Broker.Core.Internal.Jwt;
using NATS.Client.Core;
using NATS.NKeys;
using static Broker.Security.Tests.ResolverImportTests;
using static Broker.Security.Tests.ResolverTests;

namespace Broker.Security.Tests;

/// <summary>
/// Service exports and imports from account JWTs pushed to the full resolver, the same on our broker and nats-server
/// 2.9.10: a public export imported under a local subject, a <c>token_req</c> export reached with an activation token
/// only, a streamed export's several responses, and the system imports a JWT account gets (its own connections on
/// <c>$SYS.REQ.SERVER.PING.CONNZ</c>); requests and responses through NATS.Client.Core.
/// </summary>
public sealed class ResolverServiceImportTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-resolver-").FullName;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    private string Dir(ServerKind kind) => Path.Combine(directory, kind.ToString());

    /// <summary>A NATS.Client.Core connection of a new user of <paramref name="account"/>, named <paramref name="name"/>.</summary>
    internal static Task<NatsConnection> ConnectUserAsync(ServerUnderTest server, KeyPair account, string name)
    {
        var (user, jwt) = TestOperator.CreateUser(account);
        return NatsClients.ConnectAsync(server.Url, name, o => o with { AuthOpts = new NatsAuthOpts { Jwt = jwt, Seed = user.GetSeed() } });
    }

    private static ExportClaim Service(string subject, bool tokenRequired = false, string? responseType = null) =>
        new() { Name = subject, Subject = subject, Type = "service", TokenRequired = tokenRequired, ResponseType = responseType };

    /// <summary>The answer to a request, within <see cref="NatsClients.Timeout"/>.</summary>
    internal static async Task<string> AskAsync(NatsConnection connection, string subject, string body) =>
        (await connection.RequestAsync<string, string>(subject, body, replyOpts: new NatsSubOpts { Timeout = NatsClients.Timeout })).Data ?? string.Empty;

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Service_imports_reach_the_exporters_responders_as_their_claims_allow(ServerKind kind)
    {
        var op = new TestOperator();
        var exporter = TestJwt.NewKey(PrefixByte.Account);
        var importer = TestJwt.NewKey(PrefixByte.Account);
        var stranger = TestJwt.NewKey(PrefixByte.Account);
        op.AddAccount(exporter, c => c.Nats.Exports = [Service("svc.>"), Service("priv.echo", tokenRequired: true)]);
        var token = Activation(exporter, importer.GetPublicKey(), "priv.echo", "service");
        op.AddAccount(importer, c => c.Nats.Imports =
        [
            new ImportClaim { Name = "calc", Subject = "svc.>", LocalSubject = "calc.>", Account = exporter.GetPublicKey(), Type = "service" },
            new ImportClaim { Name = "echo", Subject = "priv.echo", Account = exporter.GetPublicKey(), Token = token, Type = "service" },
        ]);
        op.AddAccount(stranger, c => c.Nats.Imports = [new ImportClaim { Name = "echo", Subject = "priv.echo", Account = exporter.GetPublicKey(), Type = "service" }]);
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using (var sys = await ConnectSystemAsync(server, op))
        {
            foreach (var account in new[] { exporter, importer, stranger })
            {
                await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
            }
        }

        await using var responder = await ConnectUserAsync(server, exporter, "responder");
        using var cancel = new CancellationTokenSource(NatsClients.Timeout * 4);
        // Subscribed before the requests: a subscription made inside the serving task could reach the server after them
        // (it did under CI's load: "No reply received").
        await using var requests = await responder.SubscribeCoreAsync<string>(">");
        var serving = Task.Run(async () =>
        {
            // The responses (on _R_.…) match this subscription too and carry no reply subject.
            await foreach (var request in requests.Msgs.ReadAllAsync())
            {
                if (request.ReplyTo is null)
                {
                    continue;
                }

                await request.ReplyAsync(request.Subject + ":" + request.Data, cancellationToken: cancel.Token);
            }
        });
        await responder.PingAsync();
        await using var requester = await ConnectUserAsync(server, importer, "requester");
        await using var outsider = await ConnectUserAsync(server, stranger, "outsider");

        Assert.Equal("svc.add:1", await AskAsync(requester, "calc.add", "1"));
        Assert.Equal("priv.echo:2", await AskAsync(requester, "priv.echo", "2"));
        await Assert.ThrowsAsync<NatsNoRespondersException>(() => AskAsync(outsider, "priv.echo", "3"));
        await Assert.ThrowsAsync<NatsNoRespondersException>(() => AskAsync(requester, "svc.add", "4"));

        // Unsubscribing completes the messages' channel, which ends the serving loop.
        await requests.UnsubscribeAsync();
        await serving;
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_streamed_service_export_routes_every_response_back(ServerKind kind)
    {
        var op = new TestOperator();
        var exporter = op.CreateAccount(c => c.Nats.Exports = [Service("feed", responseType: "Stream")]);
        var importer = op.CreateAccount(c => c.Nats.Imports = [new ImportClaim { Name = "feed", Subject = "feed", Account = exporter.GetPublicKey(), Type = "service" }]);
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using (var sys = await ConnectSystemAsync(server, op))
        {
            foreach (var account in new[] { exporter, importer })
            {
                await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
            }
        }

        await using var responder = await ConnectUserAsync(server, exporter, "responder");
        await using var sub = await responder.SubscribeCoreAsync<string>("feed");
        await responder.PingAsync();
        await using var requester = await ConnectUserAsync(server, importer, "requester");
        var inbox = requester.NewInbox();
        await using var replies = await requester.SubscribeCoreAsync<string>(inbox);
        await requester.PingAsync();

        await requester.PublishAsync("feed", "go", replyTo: inbox);
        using var cancel = new CancellationTokenSource(NatsClients.Timeout);
        var request = await sub.Msgs.ReadAsync(cancel.Token);
        for (var i = 1; i <= 3; i++)
        {
            await responder.PublishAsync(request.ReplyTo!, i.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        var received = new List<string?>();
        for (var i = 0; i < 3; i++)
        {
            received.Add((await replies.Msgs.ReadAsync(cancel.Token)).Data);
        }

        Assert.Equal(["1", "2", "3"], received);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_jwt_accounts_user_asking_for_the_servers_connections_gets_its_accounts(ServerKind kind)
    {
        var op = new TestOperator();
        var mine = op.CreateAccount();
        var other = op.CreateAccount();
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using (var sys = await ConnectSystemAsync(server, op))
        {
            foreach (var account in new[] { mine, other })
            {
                await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
            }
        }

        await using var others = await ConnectUserAsync(server, other, "other");
        await using var second = await ConnectUserAsync(server, mine, "second");
        await using var asking = await ConnectUserAsync(server, mine, "asking");

        using var json = JsonDocument.Parse(await AskAsync(asking, "$SYS.REQ.SERVER.PING.CONNZ", string.Empty));
        var data = json.RootElement.GetProperty("data");

        Assert.Equal(2, data.GetProperty("num_connections").GetInt32());
        Assert.Equal(["asking", "second"], data.GetProperty("connections").EnumerateArray().Select(c => c.GetProperty("name").GetString() ?? string.Empty).Order().ToArray());
    }
}
