using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Tests.Streams;

/// <summary>
/// The consumer registry over real consumers of a memory stream: the copy-on-write list, interest by filter, and the
/// retention acknowledgements drive.
/// </summary>
public sealed class ConsumerRegistryTests() : MemoryStreamTests("js-registry-")
{
    [Fact]
    public void Consumers_are_found_by_name_listed_in_order_and_removed_only_as_registered()
    {
        var registry = new ConsumerRegistry(Stream.Store);
        var b = NewConsumer("b");
        var a = NewConsumer("a");
        var before = registry.Snapshot;

        registry.Add(b);
        registry.Add(a);

        Assert.Empty(before);
        Assert.Equal(2, registry.Count);
        Assert.Same(a, registry.Find("a"));
        Assert.Null(registry.Find("c"));
        Assert.Equal(["a", "b"], registry.ByName().Select(c => c.Name));

        var replacement = NewConsumer("a");
        registry.Add(replacement);
        registry.Remove(a);
        Assert.Same(replacement, registry.Find("a"));
        registry.Remove(replacement);
        Assert.Null(registry.Find("a"));
        Assert.Equal([b], registry.Snapshot);
    }

    [Fact]
    public void Interest_follows_the_consumers_filters()
    {
        var registry = new ConsumerRegistry(Stream.Store);
        Assert.False(registry.HasInterestIn("s.a"u8));

        registry.Add(NewConsumer("a", "s.a"));

        Assert.True(registry.HasInterestIn("s.a"u8));
        Assert.False(registry.HasInterestIn("s.b"u8));
    }

    [Theory]
    [InlineData(RetentionPolicy.Limits, 1UL)]
    [InlineData(RetentionPolicy.WorkQueue, 0UL)]
    [InlineData(RetentionPolicy.Interest, 0UL)]
    public void An_acknowledgement_removes_the_message_as_the_retention_says(RetentionPolicy retention, ulong left)
    {
        var registry = new ConsumerRegistry(Stream.Store);
        var consumer = NewConsumer("a");
        registry.Add(consumer);
        StreamTestKit.Store(Stream.Store, "s.a");

        registry.OnAcknowledged(consumer, 1, retention);

        Assert.Equal(left, Stream.Store.GetState().Messages);
    }

    [Fact]
    public void On_an_interest_stream_a_message_stays_while_another_consumer_needs_it()
    {
        var registry = new ConsumerRegistry(Stream.Store);
        var a = NewConsumer("a");
        var other = NewConsumer("other", "s.a");
        var unrelated = NewConsumer("unrelated", "s.b");
        registry.Add(a);
        registry.Add(unrelated);
        StreamTestKit.Store(Stream.Store, "s.a");

        registry.OnAcknowledged(a, 1, RetentionPolicy.Interest);
        Assert.Equal(0UL, Stream.Store.GetState().Messages);

        StreamTestKit.Store(Stream.Store, "s.a");
        registry.Add(other);
        registry.OnAcknowledged(a, 2, RetentionPolicy.Interest);
        Assert.Equal(1UL, Stream.Store.GetState().Messages);
    }

    [Fact(Timeout = 60_000)]
    public Task Adding_and_removing_many_consumers_does_not_copy_the_list_each_time()
    {
        // 2,000 consumers added then removed one at a time: a full copy per change allocates about 2 x 16 MB of
        // arrays (O(n^2)); growing by doubling and compacting the holes stays well under 1 MB.
        var registry = new ConsumerRegistry(Stream.Store);
        var all = Enumerable.Range(0, 2_000).Select(i => NewConsumer($"c{i:D4}")).ToArray();
        registry.Add(all[0]);
        registry.Remove(all[0]);

        var before = GC.GetAllocatedBytesForCurrentThread();
        foreach (var consumer in all)
        {
            registry.Add(consumer);
        }

        foreach (var consumer in all)
        {
            registry.Remove(consumer);
        }

        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.True(allocated < 1_000_000, $"{allocated:N0} B allocated");
        Assert.Equal(0, registry.Count);
        Assert.Empty(registry.Snapshot);
        return Task.CompletedTask;
    }

    [Fact(Timeout = 60_000)]
    public Task Removed_consumers_leave_the_snapshot_and_the_rest_stay_findable_after_compaction()
    {
        var registry = new ConsumerRegistry(Stream.Store);
        var all = Enumerable.Range(0, 100).Select(i => NewConsumer($"c{i:D3}", $"s.{i}")).ToArray();
        foreach (var consumer in all)
        {
            registry.Add(consumer);
        }

        var held = registry.Snapshot;
        for (var i = 1; i < all.Length; i += 2)
        {
            registry.Remove(all[i]);
        }

        var kept = all.Where((_, i) => i % 2 == 0).ToArray();
        Assert.Equal(50, registry.Count);
        Assert.Equal(kept.ToHashSet(), registry.Snapshot.ToHashSet());
        Assert.All(kept, c => Assert.Same(c, registry.Find(c.Name)));
        Assert.False(registry.HasInterestIn("s.1"u8));
        Assert.True(registry.HasInterestIn("s.2"u8));

        // A snapshot read before never shows a consumer twice, and the registry keeps working after compaction.
        Assert.Equal(held.Count(), held.Distinct().Count());
        var replacement = NewConsumer("c000", "s.x");
        registry.Add(replacement);
        registry.Remove(all[2]);
        registry.Add(all[1]);
        Assert.Same(replacement, registry.Find("c000"));
        Assert.Null(registry.Find("c002"));
        Assert.Equal(50, registry.Count);
        Assert.Contains(all[1], registry.Snapshot);
        Assert.DoesNotContain(all[0], registry.Snapshot);
        Assert.True(registry.HasInterestIn("s.x"u8));
        return Task.CompletedTask;
    }

    [Fact(Timeout = 60_000)]
    public Task The_name_map_gives_its_grown_buckets_back_once_most_consumers_went()
    {
        // Issue 25: after 10,000 MQTT QoS 1 sessions left, the stream's name map kept the buckets of its peak.
        var registry = new ConsumerRegistry(Stream.Store);
        var all = Enumerable.Range(0, 4_000).Select(i => NewConsumer($"c{i:D4}")).ToArray();
        foreach (var consumer in all)
        {
            registry.Add(consumer);
        }

        var grown = registry.NameCapacity;
        foreach (var consumer in all.Skip(10))
        {
            registry.Remove(consumer);
        }

        Assert.True(grown >= 4_000, $"grown to {grown}");
        Assert.True(registry.NameCapacity < ConsumerRegistry.TrimNamesFrom, $"capacity {registry.NameCapacity} after the leave");
        Assert.All(all.Take(10), c => Assert.Same(c, registry.Find(c.Name)));
        Assert.Equal(10, registry.Count);
        return Task.CompletedTask;
    }

    [Fact(Timeout = 60_000)]
    public async Task Walking_the_snapshot_while_consumers_are_removed_never_yields_a_null_consumer()
    {
        // The enumerator read a slot again for Current after MoveNext found it occupied: a removal between the two
        // gave the publish path (OnStored) a null consumer (seen in ConsumerCreateResponseTests under load).
        var registry = new ConsumerRegistry(Stream.Store);
        var all = Enumerable.Range(0, 64).Select(i => NewConsumer($"c{i:D2}")).ToArray();
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(2));
        var churn = Task.Run(() =>
        {
            while (!stop.IsCancellationRequested)
            {
                foreach (var consumer in all)
                {
                    registry.Add(consumer);
                }

                foreach (var consumer in all)
                {
                    registry.Remove(consumer);
                }
            }
        });

        long walked = 0;
        while (!stop.IsCancellationRequested)
        {
            foreach (var consumer in registry.Snapshot)
            {
                Assert.NotNull(consumer);
                walked++;
            }
        }

        await churn;
        Assert.True(walked > 0);
    }
}
