using System.Text.Json;
using Broker.Core.Auth;
using Broker.Storage.MemStore;
using NATS.Client.Core;

namespace Broker.JetStream.Tests;

/// <summary>
/// The system account does not count as "another account" for JetStream: with only a configured system account
/// besides <c>$G</c>, <c>$G</c> keeps JetStream (nats-server's <c>globalAccountOnly</c> skips the system account,
/// whatever its name), and the anonymous client (nats-server's invented no-auth user) gets <c>$G</c>'s account info.
/// </summary>
public sealed class SystemAccountJetStreamTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_configured_system_account_leaves_the_global_account_its_JetStream(ServerKind kind)
    {
        using var store = new TempDirectory("js-sys-");
        await using var ours = kind == ServerKind.Ours
            ? await TestBroker.StartAsync(
                o =>
                {
                    o.Accounts.Add(new AccountOptions { Name = "SYS", Users = [new UserOptions { User = "sys", Password = "x" }] });
                    o.SystemAccount = "SYS";
                },
                [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = store.Path }), new MemoryStorePlugin()])
            : null;
        await using var reference = kind == ServerKind.Reference
            ? await ReferenceServer.StartAsync($$"""
                accounts { SYS: { users: [ {user: sys, password: x} ] } }
                system_account: SYS
                jetstream { store_dir: "{{store.Path}}" }
                """)
            : null;

        await using var anonymous = await NatsClients.ConnectAsync(ours?.Url ?? reference!.Url, "anonymous");
        var reply = await anonymous.RequestAsync<byte[], byte[]>("$JS.API.INFO", [], replySerializer: NatsRawSerializer<byte[]>.Default);
        using var info = JsonDocument.Parse(reply.Data);

        Assert.False(info.RootElement.TryGetProperty("error", out _), info.RootElement.GetRawText());
        Assert.Equal("io.nats.jetstream.api.v1.account_info_response", info.RootElement.GetProperty("type").GetString());
        Assert.Equal(-1, info.RootElement.GetProperty("limits").GetProperty("max_streams").GetInt32());
    }
}
