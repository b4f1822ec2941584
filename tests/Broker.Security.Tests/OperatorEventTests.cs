using System.Text.Json;
using NATS.Client.Core;
using NATS.NKeys;
using static Broker.Security.Tests.ResolverTests;

namespace Broker.Security.Tests;

/// <summary>
/// The system account's connect and disconnect events of a JWT user carry its JWT, the key that signed it, its name
/// and tags (nats-server events.go <c>ClientInfo</c>: <c>jwt</c>, <c>issuer_key</c>, <c>name_tag</c>, <c>tags</c>),
/// the same on our broker and nats-server 2.9.10.
/// </summary>
public sealed class OperatorEventTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-events-").FullName;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Connect_and_disconnect_events_of_a_jwt_user_carry_its_jwt_issuer_name_and_tags(ServerKind kind)
    {
        var op = new TestOperator();
        var account = TestJwt.NewKey(PrefixByte.Account);
        var signingKey = TestJwt.NewKey(PrefixByte.Account);
        op.AddAccount(account, c => c.Nats.SigningKeys = new() { [signingKey.GetPublicKey()] = null });
        await using var server = await StartResolverAsync(kind, op, Path.Combine(directory, kind.ToString()));
        await using var sys = await ConnectSystemAsync(server, op);
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        await using var events = await sys.SubscribeCoreAsync<string>($"$SYS.ACCOUNT.{account.GetPublicKey()}.*");
        await sys.PingAsync();

        var (user, jwt) = TestOperator.CreateUser(account, c =>
        {
            c.Name = "worker-7";
            c.Nats.Tags = ["blue", "eu"];
        }, signingKey);
        await using (var client = await NatsClients.ConnectAsync(server.Url, "tagged", o => o with { AuthOpts = new NatsAuthOpts { Jwt = jwt, Seed = user.GetSeed() } }))
        {
            await client.PingAsync();
        }

        using var cancel = new CancellationTokenSource(NatsClients.Timeout);
        foreach (var suffix in new[] { "CONNECT", "DISCONNECT" })
        {
            var message = await events.Msgs.ReadAsync(cancel.Token);
            Assert.EndsWith("." + suffix, message.Subject, StringComparison.Ordinal);
            using var body = JsonDocument.Parse(message.Data!);
            var client = body.RootElement.GetProperty("client");
            Assert.Equal(jwt, client.GetProperty("jwt").GetString());
            Assert.Equal(signingKey.GetPublicKey(), client.GetProperty("issuer_key").GetString());
            Assert.Equal("worker-7", client.GetProperty("name_tag").GetString());
            Assert.Equal(["blue", "eu"], client.GetProperty("tags").EnumerateArray().Select(t => t.GetString() ?? string.Empty).ToArray());
        }
    }
}
