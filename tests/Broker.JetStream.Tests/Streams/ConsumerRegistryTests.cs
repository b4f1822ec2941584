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
}
