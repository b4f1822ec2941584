using Broker.Abstractions;

namespace Broker.Samples.SampleStore;

/// <summary>A consumer's state as one <see cref="ConsumerState"/> object behind a lock.</summary>
public sealed class SampleConsumerStore(ConsumerStoreConfig config, Action<SampleConsumerStore> forget) : IConsumerStore
{
    private readonly object sync = new();
    private ConsumerState state = new();
    private ConsumerStoreConfig config = config;

    public ConsumerStoreConfig Config
    {
        get
        {
            lock (sync)
            {
                return config;
            }
        }
    }

    public bool HasState
    {
        get
        {
            lock (sync)
            {
                return state.Delivered != default;
            }
        }
    }

    public void SetStarting(ulong streamSequence)
    {
        lock (sync)
        {
            state.Delivered = new SequencePair(state.Delivered.Consumer, streamSequence);
            state.AckFloor = new SequencePair(state.AckFloor.Consumer, streamSequence);
        }
    }

    public void UpdateDelivered(ulong consumerSequence, ulong streamSequence, ulong deliveryCount, long timestamp)
    {
        lock (sync)
        {
            if (consumerSequence <= state.AckFloor.Consumer)
            {
                return;
            }

            var delivered = new SequencePair(Math.Max(consumerSequence, state.Delivered.Consumer), Math.Max(streamSequence, state.Delivered.Stream));
            if (config.AckPolicy == ConsumerAckPolicy.None)
            {
                state.Delivered = state.AckFloor = delivered;
                return;
            }

            var original = state.Pending.TryGetValue(streamSequence, out var pending) ? pending.ConsumerSequence : consumerSequence;
            if (streamSequence > state.Delivered.Stream || state.Pending.ContainsKey(streamSequence))
            {
                state.Pending[streamSequence] = new PendingDelivery(original, timestamp);
            }

            state.Delivered = delivered;
            if (deliveryCount > 1)
            {
                state.Redelivered[streamSequence] = Math.Max(state.Redelivered.GetValueOrDefault(streamSequence), deliveryCount - 1);
                if (config.MaxDeliver > 0 && deliveryCount > (ulong)config.MaxDeliver)
                {
                    state.Pending.Remove(streamSequence);
                }
            }
        }
    }

    public void UpdateAcks(ulong consumerSequence, ulong streamSequence)
    {
        lock (sync)
        {
            if (config.AckPolicy == ConsumerAckPolicy.None)
            {
                return;
            }

            state.Redelivered.Remove(streamSequence);
            if (!state.Pending.TryGetValue(streamSequence, out var pending))
            {
                return;
            }

            var acked = config.AckPolicy == ConsumerAckPolicy.All
                ? state.Pending.Keys.Where(s => s <= streamSequence).ToList()
                : [streamSequence];
            acked.ForEach(s =>
            {
                state.Pending.Remove(s);
                state.Redelivered.Remove(s);
            });

            // The floor: the acknowledged delivery itself for ack all, else just below the oldest delivery still
            // pending, or everything delivered.
            if (config.AckPolicy == ConsumerAckPolicy.All)
            {
                state.AckFloor = new SequencePair(consumerSequence, streamSequence);
            }
            else if (state.Pending.Count == 0)
            {
                state.AckFloor = state.Delivered;
            }
            else
            {
                var oldest = state.Pending.MinBy(p => p.Key);
                state.AckFloor = new SequencePair(oldest.Value.ConsumerSequence - 1, oldest.Key - 1);
            }
        }
    }

    public void Update(ConsumerState state)
    {
        ArgumentNullException.ThrowIfNull(state);
        if (state.AckFloor.Consumer > state.Delivered.Consumer || state.AckFloor.Stream > state.Delivered.Stream)
        {
            throw new ArgumentException("The ack floor is above the delivered sequences.", nameof(state));
        }

        lock (sync)
        {
            this.state = state.Clone();
        }
    }

    public ConsumerState GetState()
    {
        lock (sync)
        {
            return state.Clone();
        }
    }

    public void UpdateConfig(ConsumerStoreConfig config)
    {
        lock (sync)
        {
            this.config = config;
        }
    }

    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

    public ValueTask DeleteAsync(CancellationToken cancellationToken = default)
    {
        forget(this);
        return ValueTask.CompletedTask;
    }
}
