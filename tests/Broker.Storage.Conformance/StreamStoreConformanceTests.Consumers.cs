using Broker.Abstractions;
using Xunit;

namespace Broker.Storage.Conformance;

/// <summary>Consumer-state stores: deliveries, acknowledgements per policy, redeliveries, replacement, deletion.</summary>
public abstract partial class StreamStoreConformanceTests
{
    protected static ConsumerStoreConfig ConsumerConfig(string name = "C", ConsumerAckPolicy ackPolicy = ConsumerAckPolicy.Explicit) =>
        new() { Name = name, AckPolicy = ackPolicy, Durable = true };

    [Fact(Timeout = Timeout)]
    public async Task A_new_consumer_has_no_state_until_it_starts_or_delivers()
    {
        var store = await CreateAsync();
        var consumer = store.OpenConsumerStore(ConsumerConfig());
        Assert.False(consumer.HasState);

        consumer.SetStarting(10);
        Assert.True(consumer.HasState);
        var state = consumer.GetState();
        Assert.Equal(new SequencePair(0, 10), state.Delivered);
        Assert.Equal(new SequencePair(0, 10), state.AckFloor);
    }

    [Fact(Timeout = Timeout)]
    public async Task Explicit_acks_move_the_floor_over_contiguous_acknowledgements()
    {
        var store = await CreateAsync();
        var consumer = store.OpenConsumerStore(ConsumerConfig());
        for (ulong i = 1; i <= 4; i++)
        {
            consumer.UpdateDelivered(i, i, 1, 1000 + (long)i);
        }

        var state = consumer.GetState();
        Assert.Equal(new SequencePair(4, 4), state.Delivered);
        Assert.Equal(4, state.Pending.Count);
        Assert.Equal(new PendingDelivery(2, 1002), state.Pending[2]);

        consumer.UpdateAcks(2, 2);
        Assert.Equal(new SequencePair(0, 0), consumer.GetState().AckFloor);
        consumer.UpdateAcks(1, 1);
        Assert.Equal(new SequencePair(2, 2), consumer.GetState().AckFloor);
        consumer.UpdateAcks(4, 4);
        consumer.UpdateAcks(3, 3);
        state = consumer.GetState();
        Assert.Equal(new SequencePair(4, 4), state.AckFloor);
        Assert.Empty(state.Pending);
    }

    [Fact(Timeout = Timeout)]
    public async Task Ack_all_acknowledges_everything_up_to_the_sequence()
    {
        var store = await CreateAsync();
        var consumer = store.OpenConsumerStore(ConsumerConfig(ackPolicy: ConsumerAckPolicy.All));
        for (ulong i = 1; i <= 5; i++)
        {
            consumer.UpdateDelivered(i, i * 10, 1, 1);
        }

        consumer.UpdateAcks(3, 30);
        var state = consumer.GetState();
        Assert.Equal(new SequencePair(3, 30), state.AckFloor);
        Assert.Equal([40UL, 50UL], state.Pending.Keys.Order());
    }

    [Fact(Timeout = Timeout)]
    public async Task Ack_none_moves_the_floor_with_each_delivery()
    {
        var store = await CreateAsync();
        var consumer = store.OpenConsumerStore(ConsumerConfig(ackPolicy: ConsumerAckPolicy.None));
        consumer.UpdateDelivered(1, 5, 1, 1);
        consumer.UpdateDelivered(2, 7, 1, 1);

        var state = consumer.GetState();
        Assert.Equal(new SequencePair(2, 7), state.Delivered);
        Assert.Equal(new SequencePair(2, 7), state.AckFloor);
        Assert.Empty(state.Pending);
    }

    [Fact(Timeout = Timeout)]
    public async Task Redeliveries_keep_the_first_consumer_sequence_and_count_deliveries()
    {
        var store = await CreateAsync();
        var consumer = store.OpenConsumerStore(ConsumerConfig());
        consumer.UpdateDelivered(1, 1, 1, 100);
        consumer.UpdateDelivered(2, 1, 2, 200);
        consumer.UpdateDelivered(3, 1, 3, 300);

        var state = consumer.GetState();
        Assert.Equal(new PendingDelivery(1, 300), state.Pending[1]);
        Assert.Equal(2UL, state.Redelivered[1]);

        consumer.UpdateAcks(3, 1);
        state = consumer.GetState();
        Assert.Empty(state.Pending);
        Assert.Empty(state.Redelivered);
    }

    [Fact(Timeout = Timeout)]
    public async Task Update_replaces_the_whole_state_and_rejects_an_inconsistent_one()
    {
        var store = await CreateAsync();
        var consumer = store.OpenConsumerStore(ConsumerConfig());
        var state = new ConsumerState { Delivered = new SequencePair(10, 20), AckFloor = new SequencePair(8, 18) };
        state.Pending[19] = new PendingDelivery(9, 5);
        state.Redelivered[19] = 1;
        consumer.Update(state);

        var read = consumer.GetState();
        Assert.Equal(state.Delivered, read.Delivered);
        Assert.Equal(state.AckFloor, read.AckFloor);
        Assert.Equal(new PendingDelivery(9, 5), read.Pending[19]);
        Assert.Equal(1UL, read.Redelivered[19]);

        // The copy is the caller's.
        read.Pending.Clear();
        Assert.Single(consumer.GetState().Pending);

        var bad = new ConsumerState { Delivered = new SequencePair(1, 1), AckFloor = new SequencePair(2, 2) };
        Assert.Throws<ArgumentException>(() => consumer.Update(bad));
    }

    [Fact(Timeout = Timeout)]
    public async Task Opening_a_consumer_by_an_existing_name_returns_it_with_the_new_config()
    {
        var store = await CreateAsync();
        var first = store.OpenConsumerStore(ConsumerConfig("C"));
        first.UpdateDelivered(1, 1, 1, 1);
        var again = store.OpenConsumerStore(ConsumerConfig("C") with { MaxDeliver = 5, Metadata = new byte[] { 1, 2 } });

        Assert.Equal(new SequencePair(1, 1), again.GetState().Delivered);
        Assert.Equal(5, again.Config.MaxDeliver);
        Assert.Equal(new byte[] { 1, 2 }, again.Config.Metadata.ToArray());
        Assert.Single(store.ConsumerStores);
        await again.FlushAsync();
    }

    [Fact(Timeout = Timeout)]
    public async Task Deleting_a_consumer_forgets_it()
    {
        var store = await CreateAsync();
        var consumer = store.OpenConsumerStore(ConsumerConfig("C"));
        store.OpenConsumerStore(ConsumerConfig("D"));
        await consumer.DeleteAsync();

        Assert.Equal(["D"], store.ConsumerStores.Select(c => c.Config.Name));
        var fresh = store.OpenConsumerStore(ConsumerConfig("C"));
        Assert.False(fresh.HasState);
    }
}
