using System.Text;
using Broker.Abstractions;
using Broker.Storage.FileStore;
using static Broker.FileStore.Tests.StoreFixture;

namespace Broker.FileStore.Tests;

/// <summary>The store's behaviour against the contract on a real directory, and that all of it survives a restart.</summary>
public sealed class FileStoreBasicsTests : IDisposable
{
    private readonly StoreFixture fixture = new(new FileStoreOptions { BlockSize = 4096 });

    private static readonly FileStoreOptions CompactionOptions = new() { BlockSize = 128 * 1024 };

    public void Dispose() => fixture.Dispose();

    [Fact(Timeout = 30_000)]
    public async Task Stores_loads_and_survives_restart_with_headers_and_many_blocks()
    {
        await using (var store = await fixture.CreateAsync())
        {
            for (var i = 1; i <= 500; i++)
            {
                var result = Put(store, "S.a." + (i % 7), "payload-" + i, i % 3 == 0 ? "NATS/1.0\r\nX: " + i + "\r\n\r\n" : null);
                Assert.Equal((ulong)i, result.Sequence);
            }

            await store.WaitForDurableAsync(500);
            Assert.Equal(500UL, store.DurableSequence);
            Assert.Equal(("S.a.3", "payload-3", "NATS/1.0\r\nX: 3\r\n\r\n"), Get(store, 3));
        }

        await using var reopened = await fixture.ReopenAsync();
        var state = reopened.GetState();
        Assert.Equal(500UL, state.Messages);
        Assert.Equal(1UL, state.FirstSequence);
        Assert.Equal(500UL, state.LastSequence);
        Assert.Equal(7, state.SubjectCount);
        for (ulong i = 1; i <= 500; i++)
        {
            Assert.Equal("payload-" + i, Get(reopened, i)!.Value.Payload);
        }

        Assert.Equal("{\"name\":\"S\"}", Encoding.UTF8.GetString(reopened.Config.Metadata.Span));
        Assert.Equal(501UL, Put(reopened, "S.b", "next").Sequence);
    }

    [Fact(Timeout = 30_000)]
    public async Task Filters_select_next_and_last_by_subject()
    {
        await using var store = await fixture.CreateAsync();
        Put(store, "S.a.1", "1");
        Put(store, "S.b.1", "2");
        Put(store, "S.a.2", "3");
        Put(store, "S.b.1", "4");
        var message = new StoredMessage();

        Assert.Equal(LoadStatus.Found, store.LoadNext("S.b.1"u8, 1, message, out var scanned));
        Assert.Equal(2UL, scanned);
        Assert.Equal(LoadStatus.Found, store.LoadNext("S.b.1"u8, 3, message, out scanned));
        Assert.Equal(4UL, scanned);
        Assert.Equal(LoadStatus.Found, store.LoadNext("S.a.*"u8, 2, message, out scanned));
        Assert.Equal(3UL, scanned);
        Assert.Equal(LoadStatus.EndOfStream, store.LoadNext("S.c"u8, 1, message, out scanned));
        Assert.Equal(4UL, scanned);
        Assert.Equal(LoadStatus.Found, store.LoadNext(">"u8, 0, message, out scanned));
        Assert.Equal(1UL, scanned);

        Assert.Equal(LoadStatus.Found, store.LoadLast("S.a.>"u8, message));
        Assert.Equal(3UL, message.Sequence);
        Assert.Equal(LoadStatus.Found, store.LoadLast(""u8, message));
        Assert.Equal(4UL, message.Sequence);
        Assert.Equal(LoadStatus.NotFound, store.LoadLast("S.zz"u8, message));

        Assert.Equal(new SubjectState(2, 2, 4), store.GetFilteredState(1, "S.b.1"u8));
        Assert.Equal(new SubjectState(1, 4, 4), store.GetFilteredState(3, "S.b.*"u8));
        Assert.Equal(2UL, store.NumPending(1, "S.a.>"u8, lastPerSubject: false).Total);
        Assert.Equal(3UL, store.NumPending(1, ">"u8, lastPerSubject: true).Total);
        var subjects = store.GetSubjectsState("S.b.>");
        Assert.Equal(new SubjectState(2, 2, 4), subjects["S.b.1"]);
        Assert.Equal(LoadStatus.EndOfStream, store.Load(9, message));
    }

    [Fact(Timeout = 30_000)]
    public async Task Removals_purges_compact_and_truncate_persist()
    {
        await using (var store = await fixture.CreateAsync())
        {
            for (var i = 1; i <= 100; i++)
            {
                Put(store, "S." + (i % 2 == 0 ? "even" : "odd"), "m" + i);
            }

            Assert.True(store.Remove(10));
            Assert.False(store.Remove(10));
            Assert.True(store.Remove(1));
            Assert.True(store.Remove(50, secureErase: true));
            Assert.Equal(97UL, store.GetState().Messages);
            Assert.Equal(2UL, store.GetState().FirstSequence);
            Assert.Equal([10UL, 50UL], store.GetDeletedSequences());

            Assert.Equal(17UL, store.Compact(20)); // 2..19 without 10
            Assert.Equal(20UL, store.GetState().FirstSequence);

            // Purge the odd subject below 41, keep everything else.
            Assert.Equal(10UL, store.Purge("S.odd", 41, 0));
            Assert.Equal(LoadStatus.NotFound, store.Load(21, new StoredMessage()));

            store.Truncate(90);
            Assert.Equal(90UL, store.GetState().LastSequence);
            await store.FlushAsync();
        }

        await using var reopened = await fixture.ReopenAsync();
        var state = reopened.GetState();
        Assert.Equal(20UL, state.FirstSequence);
        Assert.Equal(90UL, state.LastSequence);
        Assert.Null(Get(reopened, 10));
        Assert.Null(Get(reopened, 50));
        Assert.Null(Get(reopened, 21));
        Assert.Null(Get(reopened, 91));
        Assert.Equal("m22", Get(reopened, 22)!.Value.Payload);
        Assert.Equal(state.Messages, reopened.GetFilteredState(0, ""u8).Messages);
        var odd = reopened.GetSubjectsState("S.odd")["S.odd"];
        Assert.Equal(41UL, odd.First);
        Assert.Equal(89UL, odd.Last);

        // The truncated sequences are handed out again (truncate is explicit), nothing else is.
        Assert.Equal(91UL, Put(reopened, "S.x", "new").Sequence);
        Assert.Equal(1UL, reopened.Purge("S.x", 0, 0));
        Assert.Equal(state.Messages, reopened.Purge());
        Assert.Equal(0UL, reopened.GetState().Messages);
        Assert.Equal(92UL, reopened.GetState().FirstSequence);
    }

    [Fact(Timeout = 30_000)]
    public async Task Purge_survives_restart_and_sequences_continue()
    {
        await using (var store = await fixture.CreateAsync())
        {
            for (var i = 0; i < 300; i++)
            {
                Put(store, "S.a", new string('x', 100));
            }

            Assert.Equal(300UL, store.Purge());
            Put(store, "S.b", "after");
            await store.FlushAsync();
        }

        await using var reopened = await fixture.ReopenAsync();
        var state = reopened.GetState();
        Assert.Equal(1UL, state.Messages);
        Assert.Equal(301UL, state.FirstSequence);
        Assert.Equal(1, state.SubjectCount);
        Assert.Equal("after", Get(reopened, 301)!.Value.Payload);
    }

    [Fact(Timeout = 30_000)]
    public async Task Limits_discard_old_and_new_and_per_subject()
    {
        await using (var store = await fixture.CreateAsync("L", c => c with { MaxMessages = 10, MaxMessagesPerSubject = 3 }))
        {
            var removed = new List<ulong>();
            store.RegisterStorageUpdates((messages, bytes, sequence, subject) =>
            {
                if (messages < 0)
                {
                    removed.Add(sequence);
                }
            });
            for (var i = 1; i <= 20; i++)
            {
                Put(store, "L." + (i % 5), "v" + i);
            }

            var state = store.GetState();
            Assert.Equal(10UL, state.Messages);
            Assert.Equal(11UL, state.FirstSequence);
            Assert.Equal(10, removed.Count);
            for (var i = 0; i < 5; i++)
            {
                Assert.Equal(2UL, store.GetSubjectsState("L." + i)["L." + i].Messages);
            }

            for (var i = 0; i < 3; i++)
            {
                Put(store, "L.same", "x" + i);
            }

            Put(store, "L.same", "x3");
            Assert.Equal(3UL, store.GetSubjectsState("L.same")["L.same"].Messages);
        }

        await using var discardNew = await fixture.CreateAsync("N", c => c with { MaxMessages = 2, Discard = DiscardPolicy.New, MaxMessagesPerSubject = 1, DiscardNewPerSubject = true });
        Assert.True(Put(discardNew, "N.a", "1").IsStored);
        Assert.Equal(StoreStatus.MaxMessagesPerSubject, Put(discardNew, "N.a", "2").Status);
        Assert.True(Put(discardNew, "N.b", "2").IsStored);
        Assert.Equal(StoreStatus.MaxMessages, Put(discardNew, "N.c", "3").Status);

        await using var bytesLimited = await fixture.CreateAsync("B", c => c with { MaxBytes = 1000, Discard = DiscardPolicy.New });
        var stored = 0;
        while (Put(bytesLimited, "B.a", new string('y', 100)).IsStored)
        {
            stored++;
        }

        Assert.Equal(7, stored); // 22 + 3 + 100 + 8 = 133 bytes each, as nats-server's file store counts them
        Assert.Equal(StoreStatus.MaxBytes, Put(bytesLimited, "B.a", new string('y', 100)).Status);
    }

    [Fact(Timeout = 30_000)]
    public async Task Max_age_expires_the_oldest()
    {
        await using var store = await fixture.CreateAsync("A", c => c with { MaxAge = TimeSpan.FromMilliseconds(200) });
        Put(store, "A.x", "1");
        Put(store, "A.x", "2");
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (store.GetState().Messages > 0 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50);
        }

        Assert.Equal(0UL, store.GetState().Messages);
        Assert.Equal(3UL, store.GetState().FirstSequence);
        Assert.Equal(3UL, Put(store, "A.x", "3").Sequence);
    }

    [Fact(Timeout = 30_000)]
    public async Task Skip_and_time_queries()
    {
        await using (var store = await fixture.CreateAsync())
        {
            Put(store, "S.a", "1");
            Assert.Equal(2UL, store.Skip());
            var before = Put(store, "S.a", "3");
            Assert.Equal(3UL, before.Sequence);
            Assert.Equal(3UL, store.GetSequenceFromTime(before.Timestamp));
            Assert.Equal(4UL, store.GetSequenceFromTime(before.Timestamp + 1));
            Assert.Equal([2UL], store.GetDeletedSequences());
            Assert.Equal(4UL, store.Skip());
            await store.FlushAsync();
        }

        await using var reopened = await fixture.ReopenAsync();
        Assert.Equal(4UL, reopened.GetState().LastSequence);
        Assert.Equal(5UL, Put(reopened, "S.a", "5").Sequence);
    }

    [Fact(Timeout = 30_000)]
    public async Task Consumer_state_survives_restart()
    {
        await using (var store = await fixture.CreateAsync())
        {
            var consumer = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C1", Durable = true, Metadata = "{\"c\":1}"u8.ToArray() });
            Assert.False(consumer.HasState);
            consumer.SetStarting(0);
            for (ulong i = 1; i <= 5; i++)
            {
                consumer.UpdateDelivered(i, i, 1, 1000 + (long)i);
            }

            consumer.UpdateAcks(1, 1);
            consumer.UpdateAcks(3, 3);
            consumer.UpdateDelivered(6, 2, 2, 2000);
            await consumer.FlushAsync();
            store.OpenConsumerStore(new ConsumerStoreConfig { Name = "ordered", MemoryOnly = true }).UpdateDelivered(1, 1, 1, 1);
        }

        await using var reopened = await fixture.ReopenAsync();
        var recovered = Assert.Single(reopened.ConsumerStores);
        Assert.Equal("C1", recovered.Config.Name);
        Assert.Equal("{\"c\":1}", Encoding.UTF8.GetString(recovered.Config.Metadata.Span));
        Assert.True(recovered.HasState);
        var state = recovered.GetState();
        Assert.Equal(new SequencePair(6, 5), state.Delivered);
        Assert.Equal(new SequencePair(1, 1), state.AckFloor);
        Assert.Equal([2UL, 4UL, 5UL], state.Pending.Keys.Order());
        Assert.Equal(2000, state.Pending[2].Timestamp);
        Assert.Equal(1UL, state.Redelivered[2]);

        await recovered.DeleteAsync();
        Assert.Empty(reopened.ConsumerStores);
        Assert.False(Directory.Exists(Path.Combine(fixture.StreamDirectory("S"), "obs", "C1")));
    }

    [Fact(Timeout = 30_000)]
    public async Task Delete_removes_the_stream_directory()
    {
        var store = await fixture.CreateAsync();
        Put(store, "S.a", "1");
        await store.DeleteAsync();
        Assert.False(Directory.Exists(fixture.StreamDirectory("S")));
        Assert.Empty(await fixture.Provider().RecoverAsync(new StoreRecoveryContext("$G", fixture.StreamsDirectory)));
    }

    [Fact(Timeout = 60_000)]
    public async Task Blocks_of_mostly_removed_messages_are_compacted()
    {
        fixture.Options = CompactionOptions;
        var payload = new string('k', 200);
        await using (var store = await fixture.CreateAsync("KV", c => c with { MaxMessagesPerSubject = 1 }))
        {
            Put(store, "KV.pinned", "never updated");
            for (var i = 0; i < 20_000; i++)
            {
                Put(store, "KV.hot", payload + i);
            }

            await store.FlushAsync();
            var directory = Path.Combine(fixture.StreamDirectory("KV"), "msgs");
            long Total() => Directory.GetFiles(directory, "*.blk").Sum(f => new FileInfo(f).Length);
            var before = Total();
            var deadline = DateTime.UtcNow.AddSeconds(30);
            while (Total() > before / 4 && DateTime.UtcNow < deadline)
            {
                await Task.Delay(200);
            }

            Assert.True(Total() <= before / 4, $"{Total()} of {before} bytes left after compaction");
            Assert.Equal(2UL, store.GetState().Messages);
        }

        await using var reopened = await fixture.ReopenAsync("KV");
        Assert.Equal(2UL, reopened.GetState().Messages);
        Assert.Equal("never updated", Get(reopened, 1)!.Value.Payload);
        Assert.Equal(payload + 19_999, Get(reopened, 20_001)!.Value.Payload);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_consumer_store_keeps_its_metadata_on_disk_only_and_reads_it_back()
    {
        // Issue 25: each of 10,000 MQTT QoS 1 consumers held its ~420 B of configuration JSON in memory after writing it.
        await using var store = await fixture.CreateAsync();
        var consumer = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C 1", Durable = true, MaxDeliver = 3, Metadata = "{\"c\":1}"u8.ToArray() });
        var memory = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "M", MemoryOnly = true, Metadata = "{\"m\":1}"u8.ToArray() });

        var file = Assert.IsType<Broker.Storage.FileStore.Internal.FileConsumerStore>(consumer);
        await consumer.FlushAsync(); // a new store writes its folder and meta.inf in its first round
        Assert.True(file.MetadataOnDisk);
        Assert.Equal("{\"c\":1}", Encoding.UTF8.GetString(consumer.Config.Metadata.Span));
        Assert.Equal(("C 1", 3), (consumer.Config.Name, consumer.Config.MaxDeliver));
        Assert.Equal("{\"m\":1}", Encoding.UTF8.GetString(memory.Config.Metadata.Span));

        store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C 1", Durable = true, MaxDeliver = 4, Metadata = "{\"c\":2}"u8.ToArray() });
        Assert.True(file.MetadataOnDisk);
        Assert.Equal("{\"c\":2}", Encoding.UTF8.GetString(consumer.Config.Metadata.Span));
        Assert.Equal(4, consumer.Config.MaxDeliver);

        await consumer.DeleteAsync();
        Assert.True(consumer.Config.Metadata.IsEmpty);
    }

    [Fact(Timeout = 60_000)]
    public async Task The_consumer_map_gives_its_grown_buckets_back_once_most_consumers_went()
    {
        // Issue 25: after 10,000 MQTT QoS 1 sessions left, the stream store's consumer map kept the buckets of its peak.
        await using var store = await fixture.CreateAsync();
        var file = Assert.IsType<Broker.Storage.FileStore.Internal.FileStreamStore>(store);
        var consumers = Enumerable.Range(0, 4_000)
            .Select(i => store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C" + i, MemoryOnly = true }))
            .ToArray();
        var grown = file.ConsumerCapacity;

        foreach (var consumer in consumers.Skip(10))
        {
            await consumer.DeleteAsync();
        }

        Assert.True(grown >= 4_000, $"grown to {grown}");
        Assert.True(file.ConsumerCapacity < Broker.Storage.FileStore.Internal.ConsumerStoreMap.TrimFrom, $"capacity {file.ConsumerCapacity} after the leave");
        Assert.Equal(10, store.ConsumerStores.Count);
        Assert.Same(consumers[3], store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C3", MemoryOnly = true }));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_consumer_opened_while_one_of_its_name_is_deleted_gets_a_store_and_folder_of_its_own()
    {
        await using (var store = await fixture.CreateAsync())
        {
            for (var round = 0; round < 20; round++)
            {
                var config = new ConsumerStoreConfig { Name = "C", Durable = true };
                var old = store.OpenConsumerStore(config);
                old.UpdateDelivered(1, 1, 1, 1);
                var deleting = old.DeleteAsync();
                var fresh = store.OpenConsumerStore(config);
                await deleting;

                Assert.NotSame(old, fresh);
                fresh.UpdateConfig(config); // writes its meta.inf: the folder must be there
                fresh.UpdateDelivered(1, 2, 1, 2);
                await fresh.FlushAsync();
                Assert.Same(fresh, Assert.Single(store.ConsumerStores));
                if (round < 19)
                {
                    await fresh.DeleteAsync();
                }
            }
        }

        await using var reopened = await fixture.ReopenAsync("S");
        Assert.Equal(new SequencePair(1, 2), Assert.Single(reopened.ConsumerStores).GetState().Delivered);
    }
}
