using Broker.Abstractions;

namespace Broker.Core.Tests.Contract;

/// <summary>
/// The consumer-state transitions every store applies (nats-server's UpdateDelivered and UpdateAcks); the storage
/// conformance suite checks each store through them, these check the transitions alone.
/// </summary>
public sealed class ConsumerStateTransitionTests
{
    private static ConsumerState Delivered(ConsumerAckPolicy policy, params ulong[] streamSequences)
    {
        var state = new ConsumerState();
        var consumerSequence = 0UL;
        foreach (var sequence in streamSequences)
        {
            Assert.True(state.ApplyDelivered(policy, 0, ++consumerSequence, sequence, 1, (long)sequence));
        }

        return state;
    }

    [Fact]
    public void Explicit_acks_move_the_floor_to_just_below_the_oldest_pending()
    {
        var state = Delivered(ConsumerAckPolicy.Explicit, 10, 11, 12, 13);

        Assert.True(state.ApplyAck(ConsumerAckPolicy.Explicit, 2, 11));
        Assert.Equal(default, state.AckFloor);
        Assert.True(state.ApplyAck(ConsumerAckPolicy.Explicit, 1, 10));
        Assert.Equal(new SequencePair(2, 11), state.AckFloor);
        Assert.Equal([12UL, 13UL], state.Pending.Keys.Order());
        Assert.True(state.ApplyAck(ConsumerAckPolicy.Explicit, 4, 13));
        Assert.True(state.ApplyAck(ConsumerAckPolicy.Explicit, 3, 12));
        Assert.Equal(new SequencePair(4, 13), state.AckFloor);
        Assert.Empty(state.Pending);
        Assert.False(state.ApplyAck(ConsumerAckPolicy.Explicit, 3, 12));
    }

    [Fact]
    public void Ack_all_acknowledges_everything_up_to_the_sequence()
    {
        var state = Delivered(ConsumerAckPolicy.All, 5, 6, 7, 8);

        Assert.True(state.ApplyAck(ConsumerAckPolicy.All, 3, 7));

        Assert.Equal(new SequencePair(3, 7), state.AckFloor);
        Assert.Equal([8UL], state.Pending.Keys);
    }

    [Fact]
    public void Ack_none_moves_the_floor_with_deliveries_and_ignores_redeliveries_and_acks()
    {
        var state = Delivered(ConsumerAckPolicy.None, 3, 4);

        Assert.Equal(new SequencePair(2, 4), state.Delivered);
        Assert.Equal(state.Delivered, state.AckFloor);
        Assert.Empty(state.Pending);
        Assert.False(state.ApplyDelivered(ConsumerAckPolicy.None, 0, 3, 5, 2, 0));
        Assert.False(state.ApplyAck(ConsumerAckPolicy.None, 2, 4));
    }

    [Fact]
    public void A_redelivery_keeps_the_first_consumer_sequence_and_counts_until_max_deliver()
    {
        var state = Delivered(ConsumerAckPolicy.Explicit, 1, 2);

        Assert.True(state.ApplyDelivered(ConsumerAckPolicy.Explicit, 3, 3, 1, 2, 100));
        Assert.Equal(new PendingDelivery(1, 100), state.Pending[1]);
        Assert.Equal(1UL, state.Redelivered[1]);
        Assert.Equal(new SequencePair(3, 2), state.Delivered);

        Assert.True(state.ApplyDelivered(ConsumerAckPolicy.Explicit, 3, 4, 1, 4, 200));
        Assert.False(state.Pending.ContainsKey(1));
        Assert.Equal(3UL, state.Redelivered[1]);

        Assert.True(state.ApplyAck(ConsumerAckPolicy.Explicit, 1, 1));
        Assert.False(state.Redelivered.ContainsKey(1));
    }

    [Fact]
    public void Starting_sets_stream_sequences_and_deliveries_below_the_floor_change_nothing()
    {
        var state = new ConsumerState();
        state.ApplyStarting(41);

        Assert.Equal(new SequencePair(0, 41), state.Delivered);
        Assert.Equal(new SequencePair(0, 41), state.AckFloor);

        state.AckFloor = new SequencePair(5, 41);
        state.Delivered = new SequencePair(5, 41);
        Assert.False(state.ApplyDelivered(ConsumerAckPolicy.Explicit, 0, 5, 42, 1, 0));
        Assert.Empty(state.Pending);
    }

    [Fact]
    public void An_ack_floor_above_delivered_is_refused()
    {
        var state = new ConsumerState { Delivered = new SequencePair(1, 1), AckFloor = new SequencePair(2, 1) };

        Assert.Throws<ArgumentException>(() => ConsumerState.ThrowIfInconsistent(state));
        ConsumerState.ThrowIfInconsistent(new ConsumerState());
    }
}
