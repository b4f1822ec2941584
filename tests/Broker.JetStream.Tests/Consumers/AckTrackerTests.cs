using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Tests.Consumers;

/// <summary>The ack-pending set, ack floor, redelivery queue and timer, max_deliver and backoff, without a server.</summary>
public sealed class AckTrackerTests : IDisposable
{
    private const long Second = 1_000_000_000;
    private readonly ConsumerOutbox outbox = new();
    private readonly List<AckTracker> trackers = [];
    private IStreamStore? streamStore;
    private IConsumerStore? consumerStore;

    public void Dispose()
    {
        foreach (var tracker in trackers)
        {
            tracker.Stop();
        }
    }

    [Fact(Timeout = 10_000)]
    public async Task Explicit_acks_move_the_floor_only_over_contiguous_acknowledgements()
    {
        var acks = await TrackerAsync(new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit });
        for (ulong i = 1; i <= 3; i++)
        {
            acks.OnDelivered(i, i, 1, 100);
        }

        var done = new List<ulong>();
        Assert.False(acks.Acknowledge(2, 2, 0, new SequencePair(3, 3), done));
        Assert.Equal(new SequencePair(0, 0), acks.Floor);
        Assert.Equal([2UL], done);
        Assert.Equal(2, acks.Count);

        acks.Acknowledge(1, 1, 0, new SequencePair(3, 3), done);
        Assert.Equal(new SequencePair(2, 2), acks.Floor);

        acks.Acknowledge(3, 3, 0, new SequencePair(3, 3), done);
        Assert.Equal(new SequencePair(3, 3), acks.Floor);
        Assert.Equal(0, acks.Count);
        Assert.Equal(new SequencePair(3, 3), consumerStore!.GetState().AckFloor);
        Assert.NotEqual(0, acks.LastAcknowledged);
    }

    [Fact(Timeout = 10_000)]
    public async Task Ack_all_acknowledges_everything_up_to_the_sequence_and_ignores_what_is_below_the_floor()
    {
        var acks = await TrackerAsync(new ConsumerConfig { AckPolicy = ConsumerAckPolicy.All, MaxAckPending = 3 });
        for (ulong i = 1; i <= 3; i++)
        {
            acks.OnDelivered(i, i, 1, 100);
        }

        Assert.True(acks.AtMaxAckPending);
        var done = new List<ulong>();
        Assert.True(acks.Acknowledge(2, 2, 0, new SequencePair(3, 3), done), "room freed under max_ack_pending");
        Assert.Equal([1UL, 2UL], done.Order());
        Assert.Equal(new SequencePair(2, 2), acks.Floor);
        Assert.Equal(1, acks.Count);

        done.Clear();
        Assert.False(acks.Acknowledge(1, 1, 0, new SequencePair(3, 3), done));
        Assert.Empty(done);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_nak_redelivers_with_the_next_delivery_count_until_max_deliver_then_advises()
    {
        var acks = await TrackerAsync(new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit, MaxDeliver = 2 }, "a");
        acks.OnDelivered(1, 1, 1, 100);
        Assert.True(acks.Nak(1, 1, 1, "", nextDeliverySequence: 2));
        Assert.Equal(1, acks.RedeliverQueueCount);

        var message = new StoredMessage();
        Assert.Equal(2UL, acks.NextRedelivery(streamStore!, message));
        Assert.Equal(1UL, message.Sequence);
        acks.OnDelivered(1, 2, 2, 200);

        // The second NAK would be a third delivery: past max_deliver, dropped with an advisory.
        Assert.True(acks.Nak(1, 2, 2, "", nextDeliverySequence: 3));
        Assert.Equal(0UL, acks.NextRedelivery(streamStore!, message));
        Assert.Equal(0, acks.Count);
        var sent = ConsumerParts.Drain(outbox);
        Assert.Equal(2, sent.Count(s => s.StartsWith("$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.S.C", StringComparison.Ordinal)));
        Assert.Contains(sent, s => s.StartsWith("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.C", StringComparison.Ordinal) && s.Contains("\"deliveries\":2", StringComparison.Ordinal));
    }

    [Fact(Timeout = 10_000)]
    public async Task A_nak_for_what_is_not_pending_or_not_yet_delivered_is_ignored()
    {
        var acks = await TrackerAsync(new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit });
        acks.OnDelivered(1, 1, 1, 100);
        Assert.False(acks.Nak(1, 5, 1, "", nextDeliverySequence: 2));
        Assert.False(acks.Nak(7, 1, 1, "", nextDeliverySequence: 2));
        Assert.Equal(0, acks.RedeliverQueueCount);
        Assert.Empty(ConsumerParts.Drain(outbox));
    }

    [Fact(Timeout = 10_000)]
    public async Task A_nak_with_a_delay_redelivers_when_the_delay_is_over_and_a_malformed_delay_redelivers_now()
    {
        var acks = await TrackerAsync(new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit, AckWait = 30 * Second }, "a", "b");
        var now = GoTime.NowNanoseconds();
        acks.OnDelivered(1, 1, 1, now);
        acks.OnDelivered(2, 2, 1, now);
        Assert.True(acks.Nak(1, 1, 1, "{\"delay\":5000000000}", nextDeliverySequence: 3));
        Assert.Equal(0, acks.RedeliverQueueCount);
        Assert.False(acks.CheckPending(now + (Second / 2), firstSequence: 1));
        Assert.True(acks.CheckPending(now + (6 * Second), firstSequence: 1));
        Assert.Equal(1, acks.RedeliverQueueCount);

        Assert.True(acks.Nak(2, 2, 1, "soon", nextDeliverySequence: 3));
        Assert.Equal(2, acks.RedeliverQueueCount);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_nak_delay_written_as_a_go_duration_is_read_exactly_and_a_negative_one_redelivers_now()
    {
        var acks = await TrackerAsync(new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit, AckWait = 30 * Second }, "a", "b");
        var now = GoTime.NowNanoseconds();
        acks.OnDelivered(1, 1, 1, now);
        acks.OnDelivered(2, 2, 1, now);

        Assert.True(acks.Nak(1, 1, 1, "2.5s", nextDeliverySequence: 3));
        Assert.Equal(0, acks.RedeliverQueueCount);
        Assert.False(acks.CheckPending(now + (2 * Second), firstSequence: 1));
        Assert.True(acks.CheckPending(now + (3 * Second), firstSequence: 1));
        Assert.Equal(1, acks.RedeliverQueueCount);

        // nats-server dates a NAK's delay from an already expired ack wait, so a negative one is due at once.
        Assert.True(acks.Nak(2, 2, 1, "-1s", nextDeliverySequence: 3));
        Assert.True(acks.CheckPending(GoTime.NowNanoseconds() + 1, firstSequence: 1));
        Assert.Equal(2, acks.RedeliverQueueCount);
    }

    [Fact(Timeout = 10_000)]
    public async Task Expired_deliveries_are_queued_by_backoff_step_and_those_gone_from_the_stream_are_forgotten()
    {
        var acks = await TrackerAsync(new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit, BackOff = [1 * Second, 10 * Second] }, "a", "b", "c");
        acks.OnDelivered(1, 1, 1, 0);
        acks.OnDelivered(2, 2, 1, 0);
        acks.OnDelivered(3, 3, 1, 0);

        // Message 1 left the stream (first is 2); 2 and 3 are past the first backoff step.
        Assert.True(acks.CheckPending(2 * Second, firstSequence: 2));
        Assert.Equal(2, acks.Count);
        Assert.Equal(2, acks.RedeliverQueueCount);

        var message = new StoredMessage();
        Assert.Equal(2UL, acks.NextRedelivery(streamStore!, message));
        acks.OnDelivered(2, 4, 2, 2 * Second);

        // Once redelivered, message 2 waits for the second step (10 s), not the first.
        Assert.False(acks.CheckPending(5 * Second, firstSequence: 2));
        Assert.True(acks.CheckPending(13 * Second, firstSequence: 2));
    }

    [Fact(Timeout = 10_000)]
    public async Task Needs_ack_progress_removal_and_purge()
    {
        var acks = await TrackerAsync(new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit }, "a", "b", "c");
        acks.StartAt(0);
        acks.OnDelivered(1, 1, 1, 0);
        acks.OnDelivered(2, 2, 1, 0);
        Assert.True(acks.NeedsAck(1, nextStreamSequence: 3));
        Assert.False(acks.NeedsAck(0, nextStreamSequence: 3));
        Assert.True(acks.NeedsAck(5, nextStreamSequence: 3));

        // +WPI restarts 1's ack wait: only 2, delivered long ago, is due.
        acks.Progress(1);
        Assert.True(acks.CheckPending(GoTime.NowNanoseconds() + Second, firstSequence: 1));
        Assert.Equal(1, acks.RedeliverQueueCount);
        var message = new StoredMessage();
        Assert.Equal(2UL, acks.NextRedelivery(streamStore!, message));
        Assert.Equal(2UL, message.Sequence);

        acks.OnRemoved(1, new SequencePair(2, 2));
        Assert.False(acks.IsPending(1));
        Assert.False(acks.NeedsAck(1, nextStreamSequence: 3));

        acks.OnPurged(3, new SequencePair(2, 2));
        Assert.Equal(0, acks.Count);
        Assert.Equal(new SequencePair(2, 2), acks.Floor);
        Assert.Equal(new SequencePair(2, 2), consumerStore!.GetState().AckFloor);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_sampled_ack_queues_a_metric_and_asks_for_delivery()
    {
        var acks = await TrackerAsync(new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit, SampleFrequency = "100%" });
        acks.OnDelivered(1, 1, 1, 100);
        Assert.True(acks.Acknowledge(1, 1, sampleDeliveries: 1, new SequencePair(1, 1), []));
        var metric = Assert.Single(ConsumerParts.Drain(outbox));
        Assert.StartsWith("$JS.EVENT.METRIC.CONSUMER.ACK.S.C", metric, StringComparison.Ordinal);
        Assert.Contains("\"type\":\"io.nats.jetstream.metric.v1.consumer_ack\"", metric, StringComparison.Ordinal);
        Assert.False(ConsumerEvents.ShouldSample("0%"));
        Assert.False(ConsumerEvents.ShouldSample(null));
        Assert.True(ConsumerEvents.ShouldSample("100"));
    }

    [Fact(Timeout = 10_000)]
    public async Task Restore_brings_back_floor_pending_and_redelivery_counts()
    {
        var acks = await TrackerAsync(new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit });
        var state = new ConsumerState { Delivered = new SequencePair(5, 5), AckFloor = new SequencePair(3, 3) };
        state.Pending[5] = new PendingDelivery(5, 100);
        state.Redelivered[5] = 2;
        acks.Restore(state);
        Assert.Equal(new SequencePair(3, 3), acks.Floor);
        Assert.Equal(1, acks.Count);
        Assert.Equal(1, acks.RedeliveredCount);
        Assert.True(acks.IsPending(5));
    }

    private async Task<AckTracker> TrackerAsync(ConsumerConfig config, params string[] subjects)
    {
        streamStore = await ConsumerParts.StreamStoreAsync(subjects);
        consumerStore = streamStore.OpenConsumerStore(new ConsumerStoreConfig { Name = "C", AckPolicy = config.AckPolicy, Durable = true });
        var tracker = new AckTracker(config, consumerStore, new TestTimers(events: ConsumerParts.Events(outbox)));
        trackers.Add(tracker);
        return tracker;
    }
}
