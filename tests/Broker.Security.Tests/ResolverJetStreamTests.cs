using System.Text.Json;
using static Broker.Security.Tests.ResolverTests;

namespace Broker.Security.Tests;

/// <summary>
/// JetStream limits of an account JWT pushed to the full resolver and changed by a claims update while the account's
/// user stays connected, the same on our broker and nats-server 2.9.10 (both with JetStream on).
/// </summary>
public sealed class ResolverJetStreamTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-resolver-js-").FullName;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_claims_update_enables_and_changes_jetstream_for_an_account_in_use(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        await using var server = await JetStreamSecurityServer.StartFullResolverAsync(kind, op, Path.Combine(directory, kind.ToString()));
        await using var sys = await server.ConnectAsync(op.SystemAccount, "sys");
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        await using var client = await server.ConnectAsync(account);

        // The account is registered by this CONNECT, and set up (without JetStream) before it completes.
        using (var disabled = JsonDocument.Parse(await RequestAsync(client, "$JS.API.INFO", string.Empty)))
        {
            Assert.Equal(10039, disabled.RootElement.GetProperty("error").GetProperty("err_code").GetInt32());
        }

        var enabled = op.AddAccount(account, c =>
        {
            c.Nats.Limits.MemoryStorage = 1_048_576;
            c.Nats.Limits.DiskStorage = 2_097_152;
            c.Nats.Limits.Streams = 3;
            c.Nats.Limits.Consumers = 4;
        });
        Assert.Equal((200, account.GetPublicKey(), "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", enabled)));

        // Answered once the account has its JetStream.
        using var info = JsonDocument.Parse(await RequestAsync(client, "$JS.API.INFO", string.Empty));
        var limits = info.RootElement.GetProperty("limits");
        Assert.Equal(1_048_576, limits.GetProperty("max_memory").GetInt64());
        Assert.Equal(2_097_152, limits.GetProperty("max_storage").GetInt64());
        Assert.Equal(3, limits.GetProperty("max_streams").GetInt32());
        Assert.Equal(4, limits.GetProperty("max_consumers").GetInt32());
    }
}
