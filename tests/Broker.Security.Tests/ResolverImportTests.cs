using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Broker.Core.Internal.Jwt;
using NATS.NKeys;
using static Broker.Security.Tests.OperatorModeTests;
using static Broker.Security.Tests.ResolverTests;

namespace Broker.Security.Tests;

/// <summary>
/// Stream exports and imports from account JWTs pushed to the full resolver, the same on our broker and nats-server
/// 2.9.10: public exports, <c>token_req</c> exports with activation tokens, and an activation revoked by a claims
/// update of the exporter; the account's subject mappings; delivery checked on raw sockets.
/// </summary>
public sealed class ResolverImportTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-resolver-").FullName;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    private string Dir(ServerKind kind) => Path.Combine(directory, kind.ToString());

    private static async Task<RawClient> ConnectUserAsync(ServerUnderTest server, KeyPair account, string commands = "")
    {
        var (user, jwt) = TestOperator.CreateUser(account);
        var client = await server.ConnectAsync();
        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + commands + "PING\r\n");
        Assert.Equal(["PONG"], (await client.CollectUntilAsync("PONG")).Lines);
        return client;
    }

    private static ExportClaim Export(string subject, bool tokenRequired = false) => new() { Name = subject, Subject = subject, Type = "stream", TokenRequired = tokenRequired };

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_public_stream_export_reaches_the_importers_subscribers(ServerKind kind)
    {
        var op = new TestOperator();
        var exporter = op.CreateAccount(c => c.Nats.Exports = [Export("orders.>")]);
        var importer = op.CreateAccount(c => c.Nats.Imports =
        [
            new ImportClaim { Name = "prefixed", Subject = "orders.>", Account = exporter.GetPublicKey(), To = "a", Type = "stream" },
            new ImportClaim { Name = "mapped", Subject = "orders.eu", Account = exporter.GetPublicKey(), LocalSubject = "eu.orders", Type = "stream" },
        ]);
        var outsider = op.CreateAccount();
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using var sys = await ConnectSystemAsync(server, op);
        foreach (var account in new[] { exporter, importer, outsider })
        {
            await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        }

        await using var subscriber = await ConnectUserAsync(server, importer, "SUB a.orders.> 1\r\nSUB eu.orders 2\r\n");
        await using var other = await ConnectUserAsync(server, outsider, "SUB > 1\r\n");
        await using var publisher = await ConnectUserAsync(server, exporter);

        await publisher.SendAsync("PUB orders.eu 2\r\nhi\r\nPUB orders.us 2\r\nho\r\nPUB invoices.1 1\r\nx\r\nPING\r\n");
        await publisher.CollectUntilAsync("PONG");
        await subscriber.SendAsync("PING\r\n");
        var lines = (await subscriber.CollectUntilAsync("PONG")).Lines;

        Assert.Equal(["MSG a.orders.eu 1 2", "hi", "MSG eu.orders 2 2", "hi", "MSG a.orders.us 1 2", "ho", "PONG"], lines);
        await other.SendAsync("PING\r\n");
        Assert.Equal(["PONG"], (await other.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_private_export_needs_an_activation_and_its_revocation_ends_the_import(ServerKind kind)
    {
        var op = new TestOperator();
        var exporterKey = TestJwt.NewKey(PrefixByte.Account);
        var importer = TestJwt.NewKey(PrefixByte.Account);
        var stranger = TestJwt.NewKey(PrefixByte.Account);
        op.AddAccount(exporterKey, c => c.Nats.Exports = [Export("prices.>", tokenRequired: true)]);
        var token = Activation(exporterKey, importer.GetPublicKey(), "prices.>");
        op.AddAccount(importer, c => c.Nats.Imports = [new ImportClaim { Name = "p", Subject = "prices.>", Account = exporterKey.GetPublicKey(), Token = token, Type = "stream" }]);
        op.AddAccount(stranger, c => c.Nats.Imports = [new ImportClaim { Name = "p", Subject = "prices.>", Account = exporterKey.GetPublicKey(), Type = "stream" }]);
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using var sys = await ConnectSystemAsync(server, op);
        foreach (var account in new[] { exporterKey, importer, stranger })
        {
            await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        }

        await using var subscriber = await ConnectUserAsync(server, importer, "SUB prices.> 1\r\n");
        await using var refused = await ConnectUserAsync(server, stranger, "SUB prices.> 1\r\n");
        await using var publisher = await ConnectUserAsync(server, exporterKey);
        await publisher.SendAsync("PUB prices.eur 1\r\n1\r\nPING\r\n");
        await publisher.CollectUntilAsync("PONG");

        await subscriber.SendAsync("PING\r\n");
        Assert.Equal(["MSG prices.eur 1 1", "1", "PONG"], (await subscriber.CollectUntilAsync("PONG")).Lines);
        await refused.SendAsync("PING\r\n");
        Assert.Equal(["PONG"], (await refused.CollectUntilAsync("PONG")).Lines);

        var revoked = op.AddAccount(exporterKey, c =>
        {
            var export = Export("prices.>", tokenRequired: true);
            export.Revocations = new() { [importer.GetPublicKey()] = DateTimeOffset.UtcNow.AddSeconds(5).ToUnixTimeSeconds() };
            c.Nats.Exports = [export];
        });
        Assert.Equal((200, exporterKey.GetPublicKey(), "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", revoked)));
        await publisher.SendAsync("PUB prices.eur 1\r\n2\r\nPING\r\n");
        await publisher.CollectUntilAsync("PONG");

        await subscriber.SendAsync("PING\r\n");
        Assert.Equal(["PONG"], (await subscriber.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task An_account_jwts_mappings_apply_to_its_publishes_and_a_claims_update_replaces_them(ServerKind kind)
    {
        var op = new TestOperator();
        var account = TestJwt.NewKey(PrefixByte.Account);
        op.AddAccount(account, c => c.Nats.Mappings = new()
        {
            ["orders.*"] = [new WeightedMappingClaim { Subject = "new.orders.{{wildcard(1)}}" }],
            ["split"] = [new WeightedMappingClaim { Subject = "left", Weight = 100 }],
        });
        var other = op.CreateAccount();
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using var sys = await ConnectSystemAsync(server, op);
        foreach (var key in new[] { account, other })
        {
            await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[key.GetPublicKey()]);
        }

        await using var subscriber = await ConnectUserAsync(server, account, "SUB new.orders.* 1\r\nSUB left 2\r\nSUB orders.* 3\r\n");
        await using var outsider = await ConnectUserAsync(server, other, "SUB new.orders.* 1\r\n");
        await using var publisher = await ConnectUserAsync(server, account);
        await using var otherPublisher = await ConnectUserAsync(server, other);

        await otherPublisher.SendAsync("PUB orders.0 1\r\n0\r\nPING\r\n");
        await otherPublisher.CollectUntilAsync("PONG");
        await publisher.SendAsync("PUB orders.7 1\r\na\r\nPUB split 1\r\nb\r\nPING\r\n");
        await publisher.CollectUntilAsync("PONG");
        await subscriber.SendAsync("PING\r\n");
        Assert.Equal(["MSG new.orders.7 1 1", "a", "MSG left 2 1", "b", "PONG"], (await subscriber.CollectUntilAsync("PONG")).Lines);
        await outsider.SendAsync("PING\r\n");
        Assert.Equal(["PONG"], (await outsider.CollectUntilAsync("PONG")).Lines);

        var updated = op.AddAccount(account, c => c.Nats.Mappings = new() { ["split"] = [new WeightedMappingClaim { Subject = "right", Weight = 100 }] });
        Assert.Equal((200, account.GetPublicKey(), "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", updated)));
        await subscriber.SendAsync("SUB right 4\r\nPING\r\n");
        await subscriber.CollectUntilAsync("PONG");
        await publisher.SendAsync("PUB orders.8 1\r\nc\r\nPUB split 1\r\nd\r\nPING\r\n");
        await publisher.CollectUntilAsync("PONG");
        await subscriber.SendAsync("PING\r\n");
        Assert.Equal(["MSG orders.8 3 1", "c", "MSG right 4 1", "d", "PONG"], (await subscriber.CollectUntilAsync("PONG")).Lines);
    }

    /// <summary>An activation JWT (nats-io/jwt <c>ActivationClaims</c>) of <paramref name="subject"/> for <paramref name="importer"/>.</summary>
    internal static string Activation(KeyPair exporter, string importer, string subject, string kind = "stream")
    {
        var header = Base64Url.EncodeToString("""{"typ":"JWT","alg":"ed25519-nkey"}"""u8);
        var payload = Base64Url.EncodeToString(JsonSerializer.SerializeToUtf8Bytes(new Dictionary<string, object>
        {
            ["jti"] = Guid.NewGuid().ToString("N").ToUpperInvariant(),
            ["iat"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds() - 1,
            ["iss"] = exporter.GetPublicKey(),
            ["name"] = subject,
            ["sub"] = importer,
            ["nats"] = new Dictionary<string, object> { ["subject"] = subject, ["kind"] = kind, ["type"] = "activation", ["version"] = 2 },
        }));
        var signature = new byte[64];
        exporter.Sign(Encoding.ASCII.GetBytes(header + "." + payload), signature);
        return header + "." + payload + "." + Base64Url.EncodeToString(signature);
    }
}
