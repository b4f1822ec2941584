using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Tests.Consumers;

/// <summary>
/// <see cref="ConsumerPriority"/> with the pull front end, without a broker: which waiting request 2.11's
/// <c>nextWaiting</c> lets take a message under <c>pinned_client</c>, the <c>Nats-Pin-Id</c> header as <c>genHeader</c>
/// writes it, and the group names 2.11's <c>validGroupName</c> takes.
/// </summary>
public sealed class PriorityTests : IDisposable
{
    private readonly ConsumerOutbox outbox = new();
    private readonly Lock gate = new();
    private readonly List<IDisposable> disposables = [];
    private int kicks;

    [Theory]
    [InlineData("jobs", true)]
    [InlineData("A-z_0/9=", true)]
    [InlineData("sixteen-chars-ok", true)]
    [InlineData("seventeen-chars-x", false)]
    [InlineData("", false)]
    [InlineData("a b", false)]
    [InlineData("a.b", false)]
    [InlineData("a*", false)]
    public void Group_names_are_checked_as_2_11s_pattern(string group, bool valid) => Assert.Equal(valid, ConsumerPriority.IsValidGroupName(group));

    [Fact]
    public async Task A_pin_is_given_with_the_first_delivery_and_then_only_its_holder_is_served()
    {
        var config = new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit, PriorityPolicy = PriorityPolicy.PinnedClient, PriorityGroups = ["jobs"], PriorityTimeout = 60_000_000_000, MaxWaiting = 10 };
        var priority = await PriorityAsync(config);
        var pull = new PullRequests(config, null, outbox, static () => false, TestTimers.None);
        var now = GoTime.NowNanoseconds();
        pull.Add(ConsumerParts.Bytes("a"), "{\"batch\":1,\"group\":\"jobs\"}"u8, now, default, priority);
        pull.Add(ConsumerParts.Bytes("b"), "{\"batch\":1,\"group\":\"jobs\"}"u8, now, default, priority);

        // Nobody is pinned until a message goes out: looking for a request pins nobody.
        var first = pull.Next(now, priority)!;
        Assert.Equal("a", Encoding.UTF8.GetString(first.Reply));
        Assert.Null(priority.PinId);
        Assert.Equal("a", Encoding.UTF8.GetString(pull.Next(now, priority)!.Reply));

        // The delivery pins it; the message's headers gain Nats-Pin-Id after its own.
        var headers = priority.Deliver(first, new ReadOnlySequence<byte>("NATS/1.0\r\nA: b\r\n\r\n"u8.ToArray()));
        var pin = priority.PinId!;
        Assert.Equal(22, pin.Length);
        Assert.Equal($"NATS/1.0\r\nA: b\r\nNats-Pin-Id: {pin}\r\n\r\n", Encoding.ASCII.GetString(headers.ToArray()));
        Assert.Equal($"NATS/1.0\r\nNats-Pin-Id: {pin}\r\n\r\n", Encoding.ASCII.GetString(priority.Deliver(first, ReadOnlySequence<byte>.Empty).ToArray()));
        var advisory = Assert.Single(ConsumerParts.Drain(outbox));
        Assert.StartsWith("$JS.EVENT.ADVISORY.CONSUMER.PINNED.S.C {\"type\":\"io.nats.jetstream.advisory.v1.consumer_group_pinned\"", advisory, StringComparison.Ordinal);
        Assert.EndsWith($"\"account\":\"$G\",\"stream\":\"S\",\"consumer\":\"C\",\"group\":\"jobs\",\"pinned_id\":\"{pin}\"}}", advisory, StringComparison.Ordinal);
        pull.AfterDelivery(first, now);

        // "b" has no id: it waits. Another id is refused at once, the pin's id is served.
        Assert.Null(pull.Next(now, priority));
        pull.Add(ConsumerParts.Bytes("c"), "{\"batch\":1,\"group\":\"jobs\",\"id\":\"other\"}"u8, now, default, priority);
        pull.Add(ConsumerParts.Bytes("d"), Encoding.UTF8.GetBytes($"{{\"batch\":1,\"group\":\"jobs\",\"id\":\"{pin}\"}}"), now, default, priority);
        Assert.Equal(["c NATS/1.0 423 Nats-Pin-Id mismatch\r\n\r\n"], ConsumerParts.Drain(outbox));
        Assert.Equal("d", Encoding.UTF8.GetString(pull.Next(now, priority)!.Reply));
        Assert.Equal(2, pull.Count);

        // Unpinned: the holder's waiting request is answered 423 Nats-Wrong-Pin-Id, and "b" may be pinned next.
        Assert.False(priority.Unpin("other"));
        Assert.True(priority.Unpin("jobs"));
        Assert.Equal(1, kicks);
        Assert.Null(priority.PinId);
        Assert.Equal("b", Encoding.UTF8.GetString(pull.Next(now, priority)!.Reply));
        var sent = ConsumerParts.Drain(outbox);
        Assert.Equal(2, sent.Count);
        Assert.EndsWith("\"group\":\"jobs\",\"reason\":\"admin\"}", sent[0], StringComparison.Ordinal);
        Assert.Equal("d NATS/1.0 423 Nats-Wrong-Pin-Id\r\n\r\n", sent[1]);
        pull.Stop();
    }

    [Fact]
    public async Task A_pin_not_renewed_ends_after_the_priority_timeout()
    {
        var config = new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit, PriorityPolicy = PriorityPolicy.PinnedClient, PriorityGroups = ["jobs"], PriorityTimeout = 200_000_000, MaxWaiting = 10 };
        var priority = await PriorityAsync(config);
        var request = new WaitingRequest { Reply = ConsumerParts.Bytes("a"), Remaining = 1 };
        lock (gate)
        {
            priority.Deliver(request, ReadOnlySequence<byte>.Empty);
        }

        Assert.NotNull(priority.PinId);
        Assert.True(await Eventually.TrueAsync(() => Volatile.Read(ref kicks) == 1), "the pin timer kicks the consumer");
        Assert.Null(priority.PinId);
    }

    public void Dispose()
    {
        foreach (var disposable in disposables)
        {
            disposable.Dispose();
        }
    }

    private async Task<ConsumerPriority> PriorityAsync(ConsumerConfig config)
    {
        var store = await ConsumerParts.StreamStoreAsync("s");
        var consumerStore = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C", AckPolicy = config.AckPolicy, Durable = true });
        var acks = new AckTracker(config, consumerStore, new TestTimers(events: ConsumerParts.Events(outbox)));
        var priority = ConsumerPriority.For(config, gate, new StreamCursor(store), acks, new TestTimers(events: ConsumerParts.Events(outbox)), () => Interlocked.Increment(ref kicks))!;
        disposables.Add(new Stopper(priority, acks));
        return priority;
    }

    private sealed class Stopper(ConsumerPriority priority, AckTracker acks) : IDisposable
    {
        public void Dispose()
        {
            priority.Stop();
            acks.Stop();
        }
    }
}
