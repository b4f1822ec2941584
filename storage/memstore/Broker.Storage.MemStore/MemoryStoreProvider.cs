using Broker.Abstractions;
using Broker.Storage.MemStore.Internal;

namespace Broker.Storage.MemStore;

/// <summary>
/// Creates memory stores (storage type <c>"memory"</c>): messages live in process memory, counted against
/// JetStream's <c>max_memory_store</c>, and are gone after a restart, as with nats-server's memory storage.
/// </summary>
/// <remarks>
/// Each message's headers and payload sit in one buffer rented from the shared array pool and returned when the
/// message is removed, and subjects are shared by every message of the subject, so a stream in steady state (a limit
/// removing one message per append) stores and loads without allocating.
/// </remarks>
public sealed class MemoryStoreProvider : IStreamStoreProvider
{
    /// <summary>The storage type served, <c>"memory"</c>.</summary>
    public const string TypeName = "memory";

    /// <inheritdoc />
    public string StorageType => TypeName;

    /// <inheritdoc />
    public StorageMedium Medium => StorageMedium.Memory;

    /// <inheritdoc />
    public StoreFeatures Features => StoreFeatures.Timestamps | StoreFeatures.MessageTtl | StoreFeatures.SubjectExpiries;

    /// <inheritdoc />
    public ValueTask<IStreamStore> CreateAsync(StreamStoreConfig config, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(config);
        return ValueTask.FromResult<IStreamStore>(new MemoryStreamStore(config));
    }

    /// <inheritdoc />
    public ValueTask<IReadOnlyList<IStreamStore>> RecoverAsync(StoreRecoveryContext context, CancellationToken cancellationToken = default)
    {
        // Nothing outlives the process.
        return ValueTask.FromResult<IReadOnlyList<IStreamStore>>([]);
    }
}
