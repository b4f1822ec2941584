using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;

namespace Broker.Interop.Tests;

/// <summary>
/// nats.js's key-value and object stores (<c>js.views.kv</c>, <c>js.views.os</c>) against our broker with JetStream on
/// the memory and file stores (nats.js makes buckets on files by default), and against nats-server with <c>-js</c> for the same script.
/// </summary>
public sealed class JsJetStreamTests : IDisposable
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
    public async Task Key_value_and_object_store_round_trips_pass_on_nats_server()
    {
        await using var server = await ReferenceServer.StartAsync(null, "-js", "-sd", storeDirectory);
        ScenarioSummary.AssertOk(await NodeScripts.RunAsync("kv-objects.mjs", server.Url));
    }
}
