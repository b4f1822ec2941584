using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;

namespace Broker.Interop.Tests;

/// <summary>
/// Other languages' JetStream clients against our broker with JetStream on the memory and file stores, and against
/// nats-server with <c>-js</c>: nats.js's key-value and object stores (<c>js.views.kv</c>, <c>js.views.os</c>; nats.js
/// makes buckets on files by default), the C client's <c>js_Publish</c> with message ids, and its key-value republish
/// (nats.c's <c>KeyValueRePublish</c>).
/// </summary>
public sealed class JetStreamClientTests(CClient c) : IClassFixture<CClient>, IDisposable
{
    private readonly string storeDirectory = Directory.CreateTempSubdirectory("interop-js-").FullName;

    public void Dispose() => Directory.Delete(storeDirectory, recursive: true);

    [Fact(Timeout = 90_000)]
    public async Task Key_value_and_object_store_round_trips_pass_on_our_broker()
    {
        await using var broker = await TestBroker.StartAsync(plugins: [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory }), new MemoryStorePlugin(), new FileStorePlugin(new FileStoreOptions())]);
        ScenarioSummary.AssertOk(await NodeScripts.RunAsync("kv-objects.mjs", broker.Url));
    }

    [Fact(Timeout = 90_000)]
    public async Task C_client_publishes_to_a_stream_with_acks_and_duplicate_detection_on_our_broker()
    {
        await using var broker = await TestBroker.StartAsync(plugins: [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory }), new MemoryStorePlugin()]);
        ScenarioSummary.AssertOk(await c.RunAsync("jspublish", broker.Url, "CSTREAM", "50"));
    }

    [Fact(Timeout = 90_000)]
    public async Task C_client_publishes_to_a_stream_with_acks_and_duplicate_detection_on_nats_server()
    {
        await using var server = await ReferenceServer.StartAsync(null, "-js", "-sd", storeDirectory);
        ScenarioSummary.AssertOk(await c.RunAsync("jspublish", server.Url, "CSTREAM", "50"));
    }

    [Fact(Timeout = 90_000)]
    public async Task C_client_key_value_republish_as_its_KeyValueRePublish_on_our_broker()
    {
        await using var broker = await TestBroker.StartAsync(plugins: [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory }), new MemoryStorePlugin()]);
        ScenarioSummary.AssertOk(await c.RunAsync("kvrepublish", broker.Url, "CKV", "5"));
    }

    [Fact(Timeout = 90_000)]
    public async Task C_client_key_value_republish_as_its_KeyValueRePublish_on_nats_server()
    {
        await using var server = await ReferenceServer.StartAsync(null, "-js", "-sd", storeDirectory);
        ScenarioSummary.AssertOk(await c.RunAsync("kvrepublish", server.Url, "CKV", "5"));
    }

    [Fact(Timeout = 90_000)]
    public async Task Key_value_and_object_store_round_trips_pass_on_nats_server()
    {
        await using var server = await ReferenceServer.StartAsync(null, "-js", "-sd", storeDirectory);
        ScenarioSummary.AssertOk(await NodeScripts.RunAsync("kv-objects.mjs", server.Url));
    }
}
