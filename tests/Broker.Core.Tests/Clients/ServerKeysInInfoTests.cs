using System.Text.Json;
using Broker.TestKit;
using NATS.NKeys;

namespace Broker.Core.Tests.Clients;

/// <summary>
/// The server's keys in INFO, as nats-server 2.10 gives them: <c>server_id</c> is the public key of a server NKey and
/// <c>xkey</c> the public key of a curve key, both made once per server (the curve key on the thread pool, beside the
/// start) and the same in every client's INFO and in the server's own identity.
/// </summary>
public sealed class ServerKeysInInfoTests
{
    [Fact(Timeout = 30_000)]
    public async Task Every_client_gets_the_server_key_and_the_same_curve_key_and_another_server_has_its_own()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var other = await TestBroker.StartAsync();

        var (serverId, xkey) = await KeysAsync(broker);
        Assert.True(KeyPair.IsValidPublicKey(PrefixByte.Server, serverId), serverId);
        Assert.True(KeyPair.IsValidPublicKey(PrefixByte.Curve, xkey), xkey);
        Assert.Equal(broker.Server.ServerId, serverId);
        Assert.Equal((serverId, xkey), await KeysAsync(broker));

        var (otherId, otherXkey) = await KeysAsync(other);
        Assert.NotEqual(serverId, otherId);
        Assert.NotEqual(xkey, otherXkey);
    }

    private static async Task<(string ServerId, string XKey)> KeysAsync(TestBroker broker)
    {
        await using var client = await RawClient.ConnectAsync(broker.EndPoint);
        using var info = JsonDocument.Parse(client.Info!["INFO ".Length..]);
        return (info.RootElement.GetProperty("server_id").GetString()!, info.RootElement.GetProperty("xkey").GetString()!);
    }
}
