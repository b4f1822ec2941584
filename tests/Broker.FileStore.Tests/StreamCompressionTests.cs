using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.TestKit;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.FileStore.Tests;

/// <summary>
/// A stream's <c>compression: s2</c> (nats-server 2.10) through NATS.Client.JetStream: reported back, the file store
/// compresses the stream's sealed blocks (and only that stream's), and every message reads back, also after a restart.
/// </summary>
public sealed class StreamCompressionTests : IDisposable
{
    private readonly TempDirectory store = new("fs-compression-");

    public void Dispose() => store.Dispose();

    [Fact(Timeout = 90_000)]
    public async Task A_stream_asking_for_s2_has_its_blocks_compressed_and_reads_back()
    {
        var payload = string.Concat(Enumerable.Repeat("compressible text ", 20));
        await using (var broker = await StartAsync())
        {
            await using var connection = new NatsConnection(new NatsOpts { Url = broker.Url, RequestTimeout = TimeSpan.FromSeconds(10) });
            var js = new NatsJSContext(connection);
            var created = await js.CreateStreamAsync(new StreamConfig("PACKED", ["packed.>"]) { Storage = StreamConfigStorage.File, Compression = StreamConfigCompression.S2 });
            Assert.Equal(StreamConfigCompression.S2, created.Info.Config.Compression);
            await js.CreateStreamAsync(new StreamConfig("PLAIN", ["plain.>"]) { Storage = StreamConfigStorage.File });
            for (var i = 1; i <= 400; i++)
            {
                (await js.PublishAsync("packed.a", payload + i)).EnsureSuccess();
                (await js.PublishAsync("plain.a", payload + i)).EnsureSuccess();
            }

            Assert.True(await Eventually.TrueAsync(() => Blocks("PACKED").Any(size => size < 8192), TimeSpan.FromSeconds(30)), "no compressed block");
            Assert.DoesNotContain(Blocks("PLAIN").SkipLast(1), size => size < 8192);
            Assert.Equal(payload + 7, await GetAsync(connection, 7));
        }

        await using (var broker = await StartAsync())
        {
            await using var connection = new NatsConnection(new NatsOpts { Url = broker.Url, RequestTimeout = TimeSpan.FromSeconds(10) });
            var js = new NatsJSContext(connection);
            var stream = await js.GetStreamAsync("PACKED");
            Assert.Equal(StreamConfigCompression.S2, stream.Info.Config.Compression);
            Assert.Equal(400L, stream.Info.State.Messages);
            foreach (var sequence in new[] { 1, 200, 400 })
            {
                Assert.Equal(payload + sequence, await GetAsync(connection, sequence));
            }
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task An_unknown_algorithm_is_invalid_json_and_none_is_not_echoed()
    {
        await using var broker = await StartAsync();
        await using var connection = new NatsConnection(new NatsOpts { Url = broker.Url, RequestTimeout = TimeSpan.FromSeconds(10) });
        var unknown = await connection.RequestAsync<string, string>("$JS.API.STREAM.CREATE.Z", """{"name":"Z","storage":"file","compression":"zstd"}""");
        Assert.Contains("\"err_code\":10025", unknown.Data, StringComparison.Ordinal);
        var none = await connection.RequestAsync<string, string>("$JS.API.STREAM.CREATE.N", """{"name":"N","storage":"file","compression":"none"}""");
        Assert.DoesNotContain("compression", none.Data, StringComparison.Ordinal);
    }

    private static async Task<string> GetAsync(NatsConnection connection, int sequence)
    {
        var reply = await connection.RequestAsync<string, string>("$JS.API.STREAM.MSG.GET.PACKED", $"{{\"seq\":{sequence}}}");
        var data = System.Text.Json.JsonDocument.Parse(reply.Data!).RootElement.GetProperty("message").GetProperty("data").GetString()!;
        return System.Text.Encoding.UTF8.GetString(Convert.FromBase64String(data));
    }

    private List<long> Blocks(string stream) =>
        [.. Directory.GetFiles(Path.Combine(store.Path, "jetstream", "$G", "streams", stream, "msgs"), "*.blk").Order(StringComparer.Ordinal).Select(f => new FileInfo(f).Length)];

    private Task<TestBroker> StartAsync() =>
        TestBroker.StartAsync(plugins: [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = store.Path }), new FileStorePlugin(new FileStoreOptions { BlockSize = 16384 })]);
}
