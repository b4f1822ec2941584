using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>A consumer's state kept in memory (nats-server's <c>consumerMemStore</c>).</summary>
internal sealed class MemoryConsumerStore(ConsumerStoreConfig config, MemoryStreamStore stream) : IConsumerStore
{
    private readonly Lock gate = new();
    private ConsumerState state = new();
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
            state.ApplyStarting(streamSequence);
        }
    }

    public void UpdateDelivered(ulong consumerSequence, ulong streamSequence, ulong deliveryCount, long timestamp)
    {
        lock (gate)
        {
            state.ApplyDelivered(config.AckPolicy, config.MaxDeliver, consumerSequence, streamSequence, deliveryCount, timestamp);
        }
    }

    public void UpdateAcks(ulong consumerSequence, ulong streamSequence)
    {
        lock (gate)
        {
            state.ApplyAck(config.AckPolicy, consumerSequence, streamSequence);
        }
    }

    public void Update(ConsumerState newState)
    {
        ConsumerState.ThrowIfInconsistent(newState);
        lock (gate)
        {
            state = newState.Clone();
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
