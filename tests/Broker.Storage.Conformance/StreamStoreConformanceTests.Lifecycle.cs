using Broker.Abstractions;
using Xunit;

namespace Broker.Storage.Conformance;

/// <summary>Durability waits, concurrent use, closing, deleting, configuration and (for durable stores) recovery.</summary>
public abstract partial class StreamStoreConformanceTests
{
    [Fact(Timeout = Timeout)]
    public async Task Durability_waits_complete_for_stored_messages_and_flush()
    {
        var store = await CreateAsync();
        var results = Enumerable.Range(0, 100).Select(i => Store(store, "foo.a", "m" + i)).ToList();

        await store.WaitForDurableAsync(results[^1].Sequence);
        Assert.True(store.DurableSequence >= results[^1].Sequence);
        await store.WaitForDurableAsync(results[0].Sequence);
        store.Remove(5);
        await store.FlushAsync();
        var consumer = store.OpenConsumerStore(ConsumerConfig());
        consumer.UpdateDelivered(1, 1, 1, 1);
        await consumer.FlushAsync();
    }

    [Fact(Timeout = Timeout)]
    public async Task Concurrent_loads_and_state_queries_run_beside_appends()
    {
        var store = await CreateAsync(NewConfig() with { MaxMessages = 500 });
        using var stop = new CancellationTokenSource();
        var loads = 0;
        var readers = Enumerable.Range(0, 3).Select(reader => Task.Run(() =>
        {
            var message = new StoredMessage();
            while (!stop.IsCancellationRequested)
            {
                var state = store.GetState();
                if (state.Messages > 0)
                {
                    var status = store.LoadNext("foo.*"u8, state.FirstSequence, message, out _);
                    Assert.NotEqual(LoadStatus.NotFound, status);
                    if (status == LoadStatus.Found)
                    {
                        Assert.StartsWith("m", Text(message.Payload));
                        Interlocked.Increment(ref loads);
                    }
                }
            }
        })).ToList();

        // Keep appending until the readers have loaded plenty while appends were running.
        var appended = 0;
        while (appended < 5000 || (Volatile.Read(ref loads) < 100 && appended < 5_000_000))
        {
            Assert.True(Store(store, appended % 2 == 0 ? "foo.a" : "foo.b", "m" + appended).IsStored);
            appended++;
        }

        await stop.CancelAsync();
        await Task.WhenAll(readers);
        Assert.True(Volatile.Read(ref loads) >= 100);

        var final = store.GetState();
        Assert.Equal(500UL, final.Messages);
        Assert.Equal((ulong)appended, final.LastSequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_disposed_store_refuses_appends()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "x");
        await store.DisposeAsync();
        Assert.Equal(StoreStatus.Closed, Store(store, "foo.a", "y").Status);
        await store.DisposeAsync();
    }

    [Fact(Timeout = Timeout)]
    public async Task Config_and_metadata_round_trip()
    {
        var metadata = new byte[] { 7, 8, 9 };
        var store = await CreateAsync(NewConfig() with { Metadata = metadata, MaxMessages = 10 });
        Assert.Equal(metadata, store.Config.Metadata.ToArray());
        Assert.Equal(10, store.Config.MaxMessages);
        Assert.Equal(CreateProvider().StorageType, store.Config.StorageType);

        store.UpdateConfig(store.Config with { Metadata = new byte[] { 1 } });
        Assert.Equal(new byte[] { 1 }, store.Config.Metadata.ToArray());
    }

    [Fact(Timeout = Timeout)]
    public async Task A_deleted_stream_is_not_recovered()
    {
        var provider = CreateProvider();
        var store = await provider.CreateAsync(NewConfig("GONE"));
        Store(store, "foo.a", "x");
        await store.DeleteAsync();

        var recovered = await provider.RecoverAsync(new StoreRecoveryContext("$G", Path.Combine(StoreDirectory, "$G", "streams")));
        Assert.DoesNotContain(recovered, s => s.Config.Name == "GONE");
        foreach (var other in recovered)
        {
            await other.DisposeAsync();
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task A_durable_store_recovers_messages_metadata_and_consumers()
    {
        if (!IsDurable)
        {
            return;
        }

        var provider = CreateProvider();
        var metadata = new byte[] { 42 };
        var store = await provider.CreateAsync(NewConfig("KEEP") with { Metadata = metadata, MaxMessagesPerSubject = 5 });
        StoreMany(store, "foo.a", 3);
        store.Remove(2);
        var consumer = store.OpenConsumerStore(ConsumerConfig("C") with { Metadata = new byte[] { 5 } });
        consumer.UpdateDelivered(1, 1, 1, 1);
        consumer.UpdateDelivered(2, 3, 1, 2);
        consumer.UpdateAcks(1, 1);
        await consumer.FlushAsync();
        await store.FlushAsync();
        await store.DisposeAsync();

        var recovered = await provider.RecoverAsync(new StoreRecoveryContext("$G", Path.Combine(StoreDirectory, "$G", "streams")));
        var again = Assert.Single(recovered, s => s.Config.Name == "KEEP");
        opened.AddRange(recovered);
        Assert.Equal(metadata, again.Config.Metadata.ToArray());
        Assert.Equal(5, again.Config.MaxMessagesPerSubject);
        var state = again.GetState();
        Assert.Equal(2UL, state.Messages);
        Assert.Equal(3UL, state.LastSequence);
        var message = new StoredMessage();
        Assert.Equal(LoadStatus.NotFound, again.Load(2, message));
        Assert.Equal(LoadStatus.Found, again.Load(3, message));
        Assert.Equal("m2", Text(message.Payload));
        Assert.Equal(4UL, Store(again, "foo.a", "next").Sequence);

        var consumerAgain = Assert.Single(again.ConsumerStores);
        Assert.Equal("C", consumerAgain.Config.Name);
        Assert.Equal(new byte[] { 5 }, consumerAgain.Config.Metadata.ToArray());
        var consumerState = consumerAgain.GetState();
        Assert.Equal(new SequencePair(2, 3), consumerState.Delivered);
        // nats-server's UpdateAcks: the floor moves up to just below the next pending delivery (stream 3, consumer 2).
        Assert.Equal(new SequencePair(1, 2), consumerState.AckFloor);
        Assert.True(consumerState.Pending.ContainsKey(3));
    }
}
