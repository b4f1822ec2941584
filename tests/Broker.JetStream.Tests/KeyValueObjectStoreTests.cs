using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.KeyValueStore;
using NATS.Client.ObjectStore;
using NATS.Client.ObjectStore.Models;

namespace Broker.JetStream.Tests;

/// <summary>Key-value and object store round trips through NATS.Client.KeyValueStore and ObjectStore 3.3.2.</summary>
public class KeyValueObjectStoreTests
{
    private static async Task<(JetStreamServer Server, NatsConnection Connection, NatsJSContext Js)> StartAsync()
    {
        var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        return (server, connection, js);
    }

    [Fact(Timeout = 30_000)]
    public async Task Put_get_create_update_delete_purge_and_history()
    {
        var (server, connection, js) = await StartAsync();
        await using var _ = server;
        await using var __ = connection;
        var kv = new NatsKVContext(js);
        var store = await kv.CreateStoreAsync(new NatsKVConfig("config") { Storage = NatsKVStorageType.Memory, History = 5 });

        var r1 = await store.PutAsync("color", "red");
        var r2 = await store.PutAsync("color", "green");
        Assert.Equal(1UL, r1);
        Assert.Equal(2UL, r2);

        var entry = await store.GetEntryAsync<string>("color");
        Assert.Equal("green", entry.Value);
        Assert.Equal(2UL, entry.Revision);
        Assert.Equal(NatsKVOperation.Put, entry.Operation);

        var old = await store.GetEntryAsync<string>("color", revision: 1);
        Assert.Equal("red", old.Value);

        await store.CreateAsync("size", "small");
        await Assert.ThrowsAsync<NatsKVCreateException>(async () => await store.CreateAsync("size", "large"));

        var r4 = await store.UpdateAsync("size", "medium", revision: 3);
        Assert.Equal(4UL, r4);
        await Assert.ThrowsAsync<NatsKVWrongLastRevisionException>(async () => await store.UpdateAsync("size", "large", revision: 3));

        await store.DeleteAsync("size");
        await Assert.ThrowsAsync<NatsKVKeyDeletedException>(async () => await store.GetEntryAsync<string>("size"));

        // A deleted key can be created again.
        await store.CreateAsync("size", "again");

        var history = new List<string?>();
        await foreach (var item in store.HistoryAsync<string>("color"))
        {
            history.Add(item.Value);
        }

        Assert.Equal(["red", "green"], history);

        await store.PurgeAsync("color");
        await Assert.ThrowsAsync<NatsKVKeyDeletedException>(async () => await store.GetEntryAsync<string>("color"));

        var keys = new List<string>();
        await foreach (var key in store.GetKeysAsync())
        {
            keys.Add(key);
        }

        Assert.Equal(["size"], keys);

        var status = await store.GetStatusAsync();
        Assert.Equal("config", status.Bucket);
        Assert.Equal("KV_config", status.Info.Config.Name);
        await Assert.ThrowsAsync<NatsKVKeyNotFoundException>(async () => await store.GetEntryAsync<string>("never"));
    }

    [Fact(Timeout = 30_000)]
    public async Task Watch_sees_current_values_then_updates()
    {
        var (server, connection, js) = await StartAsync();
        await using var _ = server;
        await using var __ = connection;
        var kv = new NatsKVContext(js);
        var store = await kv.CreateStoreAsync(new NatsKVConfig("w") { Storage = NatsKVStorageType.Memory });
        await store.PutAsync("a", "1");
        await store.PutAsync("b", "1");
        await store.PutAsync("a", "2");

        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(15));
        var seen = new List<string>();
        var watching = Task.Run(async () =>
        {
            await foreach (var entry in store.WatchAsync<string>(cancellationToken: cts.Token))
            {
                seen.Add($"{entry.Key}={entry.Value}:{entry.Operation}");
                if (seen.Count == 4)
                {
                    break;
                }
            }
        });

        await Task.Delay(500);
        await store.PutAsync("c", "1");
        await store.DeleteAsync("b");
        await watching;

        Assert.Equal(["b=1:Put", "a=2:Put", "c=1:Put", "b=:Del"], seen);
    }

    [Fact(Timeout = 30_000)]
    public async Task Values_expire_with_the_buckets_max_age()
    {
        var (server, connection, js) = await StartAsync();
        await using var _ = server;
        await using var __ = connection;
        var kv = new NatsKVContext(js);
        // Two seconds: a loaded machine still reads the key back before it goes.
        var store = await kv.CreateStoreAsync(new NatsKVConfig("ttl") { Storage = NatsKVStorageType.Memory, MaxAge = TimeSpan.FromSeconds(2) });
        await store.PutAsync("k", "v");
        Assert.Equal("v", (await store.GetEntryAsync<string>("k")).Value);

        var deadline = DateTime.UtcNow.AddSeconds(10);
        var expired = false;
        while (!expired && DateTime.UtcNow < deadline)
        {
            await Task.Delay(100);
            try
            {
                await store.GetEntryAsync<string>("k");
            }
            catch (NatsKVKeyNotFoundException)
            {
                expired = true;
            }
        }

        Assert.True(expired);
    }

    [Fact(Timeout = 60_000)]
    public async Task Object_store_puts_and_gets_multi_chunk_objects_lists_links_and_deletes()
    {
        var (server, connection, js) = await StartAsync();
        await using var _ = server;
        await using var __ = connection;
        var obj = new NatsObjContext(js);
        var store = await obj.CreateObjectStoreAsync(new NatsObjConfig("files") { Storage = NatsObjStorageType.Memory });

        var data = new byte[1024 * 1024 + 12345];
        Random.Shared.NextBytes(data);
        var meta = await store.PutAsync("big.bin", data);
        Assert.Equal("big.bin", meta.Name);
        Assert.Equal((ulong)data.Length, meta.Size);
        Assert.True(meta.Chunks > 1, "the object spans several chunks");

        var back = await store.GetBytesAsync("big.bin");
        Assert.Equal(data, back);

        await store.PutAsync("small.txt", "hello"u8.ToArray());
        await store.AddLinkAsync("link.txt", "small.txt");
        var linked = await store.GetBytesAsync("link.txt");
        Assert.Equal("hello"u8.ToArray(), linked);

        var names = new List<string>();
        await foreach (var item in store.ListAsync())
        {
            names.Add(item.Name);
        }

        Assert.Equal(["big.bin", "link.txt", "small.txt"], names.Order());

        await store.DeleteAsync("big.bin");
        await Assert.ThrowsAsync<NatsObjNotFoundException>(async () => await store.GetBytesAsync("big.bin"));
        var info = await store.GetInfoAsync("big.bin", showDeleted: true);
        Assert.True(info.Deleted);

        var status = await store.GetStatusAsync();
        Assert.Equal("files", status.Bucket);
    }
}
