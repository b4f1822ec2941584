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

    // The transitions are the contract's, so this store agrees with the broker's own on every sequence of events.
    public void SetStarting(ulong streamSequence)
    {
        lock (sync)
        {
            state.ApplyStarting(streamSequence);
        }
    }

    public void UpdateDelivered(ulong consumerSequence, ulong streamSequence, ulong deliveryCount, long timestamp)
    {
        lock (sync)
        {
            state.ApplyDelivered(config.AckPolicy, config.MaxDeliver, consumerSequence, streamSequence, deliveryCount, timestamp);
        }
    }

    public void UpdateAcks(ulong consumerSequence, ulong streamSequence)
    {
        lock (sync)
        {
            state.ApplyAck(config.AckPolicy, consumerSequence, streamSequence);
        }
    }

    public void Update(ConsumerState state)
    {
        ConsumerState.ThrowIfInconsistent(state);
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
