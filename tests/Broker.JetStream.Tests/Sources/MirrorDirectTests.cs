using System.Text;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.KeyValueStore;
using static Broker.JetStream.Tests.Sources.SourceTestKit;

namespace Broker.JetStream.Tests.Sources;

/// <summary>
/// <c>mirror_direct</c> (nats-server 2.9.10): a mirror of a stream with <c>allow_direct</c>, a key-value bucket's,
/// inherits it as <c>mirror_direct</c> and, once caught up, answers its origin's direct gets in the same <c>_sys_</c>
/// queue group as the origin, naming itself in <c>Nats-Stream</c>; the same steps against both servers.
/// </summary>
public sealed class MirrorDirectTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Kinds), MemberType = typeof(SourceTestKit))]
    public async Task A_key_value_mirror_answers_the_buckets_direct_gets(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        var bucket = await new NatsKVContext(js).CreateStoreAsync(new NatsKVConfig("B") { Storage = NatsKVStorageType.Memory });
        await bucket.PutAsync("k", "v1");

        var created = await RequestAsync(connection, "$JS.API.STREAM.CREATE.MB", """{"name":"MB","storage":"file","mirror":{"name":"KV_B"}}""");
        Assert.Equal(default, Error(created));
        Assert.True(created.GetProperty("config").GetProperty("mirror_direct").GetBoolean());

        // v1 first (once v2 is in, the bucket keeps only v2 and a mirror not there yet skips v1's sequence).
        await WaitForMessagesAsync(connection, "MB", 1);
        await bucket.PutAsync("k", "v2");
        await WaitForMessagesAsync(connection, "MB", 2);

        var answeredBy = new HashSet<string>(StringComparer.Ordinal);
        await Eventually.AssertAsync(
            async () =>
            {
                var reply = await connection.RequestAsync<byte[], string>("$JS.API.DIRECT.GET.KV_B.$KV.B.k", null);
                Assert.Equal("v2", reply.Data);
                Assert.Equal("$KV.B.k", reply.Headers?["Nats-Subject"].ToString());
                answeredBy.Add(reply.Headers?["Nats-Stream"].ToString() ?? "");
                return answeredBy.Count == 2;
            },
            "both the bucket and its mirror answer direct gets",
            TimeSpan.FromSeconds(20));
        Assert.Equal(["KV_B", "MB"], answeredBy.Order(StringComparer.Ordinal));
        Assert.Equal("v2", (await bucket.GetEntryAsync<string>("k")).Value);
    }
}
