using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>A consumer's state kept in memory (nats-server's <c>consumerMemStore</c>).</summary>
internal sealed class MemoryConsumerStore(ConsumerStoreConfig config, MemoryStreamStore stream) : IConsumerStore
{
    private readonly Lock gate = new();
    private readonly ConsumerState state = new();
    private ConsumerStoreConfig config = config;

    public ConsumerStoreConfig Config
    {
        get
        {
            lock (gate)
            {
                return config;
            }
        }
    }

    public bool HasState
    {
        get
        {
            lock (gate)
            {
                return state.Delivered.Consumer != 0 || state.Delivered.Stream != 0;
            }
        }
    }

    public void SetStarting(ulong streamSequence)
    {
        lock (gate)
        {
            state.Delivered = state.Delivered with { Stream = streamSequence };
            state.AckFloor = state.AckFloor with { Stream = streamSequence };
        }
    }

    public void UpdateDelivered(ulong consumerSequence, ulong streamSequence, ulong deliveryCount, long timestamp)
    {
        lock (gate)
        {
            if (deliveryCount != 1 && config.AckPolicy == ConsumerAckPolicy.None)
            {
                return;
            }

            // A replay of something older than the ack floor changes nothing.
            if (consumerSequence <= state.AckFloor.Consumer)
            {
                return;
            }

            if (config.AckPolicy == ConsumerAckPolicy.None)
            {
                if (consumerSequence > state.Delivered.Consumer)
                {
                    state.Delivered = state.Delivered with { Consumer = consumerSequence };
                    state.AckFloor = state.AckFloor with { Consumer = consumerSequence };
                }

                if (streamSequence > state.Delivered.Stream)
                {
                    state.Delivered = state.Delivered with { Stream = streamSequence };
                    state.AckFloor = state.AckFloor with { Stream = streamSequence };
                }

                return;
            }

            if (streamSequence <= state.Delivered.Stream)
            {
                // A redelivery keeps the original consumer sequence.
                if (state.Pending.TryGetValue(streamSequence, out var pending))
                {
                    state.Pending[streamSequence] = pending with { Timestamp = timestamp };
                }
            }
            else
            {
                state.Pending[streamSequence] = new PendingDelivery(consumerSequence, timestamp);
            }

            state.Delivered = new SequencePair(
                Math.Max(consumerSequence, state.Delivered.Consumer),
                Math.Max(streamSequence, state.Delivered.Stream));

            if (deliveryCount > 1)
            {
                if (config.MaxDeliver > 0 && deliveryCount > (ulong)config.MaxDeliver)
                {
                    state.Pending.Remove(streamSequence);
                }

                if (!state.Redelivered.TryGetValue(streamSequence, out var count) || count < deliveryCount - 1)
                {
                    state.Redelivered[streamSequence] = deliveryCount - 1;
                }
            }
        }
    }

    public void UpdateAcks(ulong consumerSequence, ulong streamSequence)
    {
        lock (gate)
        {
            if (config.AckPolicy == ConsumerAckPolicy.None)
            {
                return;
            }

            state.Redelivered.Remove(streamSequence);
            if (consumerSequence <= state.AckFloor.Consumer || !state.Pending.TryGetValue(streamSequence, out var pending))
            {
                return;
            }

            if (config.AckPolicy == ConsumerAckPolicy.All)
            {
                state.AckFloor = new SequencePair(consumerSequence, streamSequence);
                foreach (var sequence in state.Pending.Keys.Where(s => s <= streamSequence).ToList())
                {
                    state.Pending.Remove(sequence);
                    state.Redelivered.Remove(sequence);
                }

                return;
            }

            state.Pending.Remove(streamSequence);
            if (consumerSequence > pending.ConsumerSequence && pending.ConsumerSequence > 0)
            {
                consumerSequence = pending.ConsumerSequence;
            }

            if (state.Pending.Count == 0)
            {
                state.AckFloor = state.Delivered;
            }
            else if (consumerSequence == state.AckFloor.Consumer + 1)
            {
                state.AckFloor = new SequencePair(consumerSequence, streamSequence);
                for (var sequence = streamSequence + 1; sequence <= state.Delivered.Stream; sequence++)
                {
                    if (state.Pending.TryGetValue(sequence, out var next))
                    {
                        if (next.ConsumerSequence > 0)
                        {
                            state.AckFloor = new SequencePair(next.ConsumerSequence - 1, sequence - 1);
                        }

                        break;
                    }
                }
            }
        }
    }

    public void Update(ConsumerState newState)
    {
        ArgumentNullException.ThrowIfNull(newState);
        if (newState.AckFloor.Consumer > newState.Delivered.Consumer || newState.AckFloor.Stream > newState.Delivered.Stream)
        {
            throw new ArgumentException("The ack floor is above the delivered sequences.", nameof(newState));
        }

        lock (gate)
        {
            state.Delivered = newState.Delivered;
            state.AckFloor = newState.AckFloor;
            state.Pending.Clear();
            foreach (var (sequence, pending) in newState.Pending)
            {
                state.Pending[sequence] = pending;
            }

            state.Redelivered.Clear();
            foreach (var (sequence, count) in newState.Redelivered)
            {
                state.Redelivered[sequence] = count;
            }
        }
    }

    public ConsumerState GetState()
    {
        lock (gate)
        {
            return state.Clone();
        }
    }

    public void UpdateConfig(ConsumerStoreConfig newConfig)
    {
        ArgumentNullException.ThrowIfNull(newConfig);
        lock (gate)
        {
            config = newConfig;
        }
    }

    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

    public ValueTask DeleteAsync(CancellationToken cancellationToken = default)
    {
        stream.ForgetConsumer(this);
        return ValueTask.CompletedTask;
    }
}
