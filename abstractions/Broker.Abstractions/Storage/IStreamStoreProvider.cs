namespace Broker.Abstractions;

/// <summary>
/// Creates the stores of one storage type. A stream's <c>storage</c> field names the type (<c>"memory"</c>,
/// <c>"file"</c>, or a third party's); the storage plugin that provides it registers its provider with
/// <c>services.AddSingleton&lt;IStreamStoreProvider, MyProvider&gt;()</c>, and the JetStream engine picks the provider
/// whose <see cref="StorageType"/> matches. A stream asking for a type no loaded plugin provides is refused.
/// </summary>
/// <remarks>Thread-safe. The engine and the stores share nothing but this contract.</remarks>
public interface IStreamStoreProvider
{
    /// <summary>The storage type this provider serves, compared ordinally (<c>"memory"</c>, <c>"file"</c>, <c>"acme-db"</c>).</summary>
    string StorageType { get; }

    /// <summary>Which JetStream limit the stores' bytes count against (<c>max_memory_store</c> or <c>max_file_store</c>).</summary>
    StorageMedium Medium { get; }

    /// <summary>
    /// What this provider's stores can do beyond contract 1.3 (contract 1.4): the engine refuses a stream whose
    /// configuration needs more (<c>allow_msg_ttl</c>) and keeps the current time where a store cannot take a given one.
    /// Default <see cref="StoreFeatures.None"/>, which a provider written against contract 1.3 gets.
    /// </summary>
    StoreFeatures Features => StoreFeatures.None;

    /// <summary>Creates the empty store of a new stream.</summary>
    /// <param name="config">The stream's store configuration (validated by the engine).</param>
    /// <param name="cancellationToken">Cancels the creation.</param>
    /// <returns>The store.</returns>
    /// <exception cref="InvalidOperationException">The store cannot be created; the message says why (sent to the client).</exception>
    ValueTask<IStreamStore> CreateAsync(StreamStoreConfig config, CancellationToken cancellationToken = default);

    /// <summary>
    /// Opens every stream this provider kept from an earlier run (none for a memory store), with their consumer
    /// stores, at JetStream startup. Each store's <see cref="IStreamStore.Config"/> carries the metadata the engine
    /// stored. A provider recognises only streams it created itself.
    /// </summary>
    /// <param name="context">Where JetStream keeps its data.</param>
    /// <param name="cancellationToken">Cancels the recovery.</param>
    /// <returns>The recovered stores.</returns>
    ValueTask<IReadOnlyList<IStreamStore>> RecoverAsync(StoreRecoveryContext context, CancellationToken cancellationToken = default);
}

/// <summary>Where JetStream keeps the data of one account, handed to <see cref="IStreamStoreProvider.RecoverAsync"/>.</summary>
/// <param name="Account">The account (<c>"$G"</c> without accounts).</param>
/// <param name="StreamsDirectory">
/// <c>&lt;store_dir&gt;/jetstream/&lt;account&gt;/streams</c>, the parent of every <see cref="StreamStoreConfig.Directory"/>
/// of the account; <see langword="null"/> when JetStream has no store directory.
/// </param>
public sealed record StoreRecoveryContext(string Account, string? StreamsDirectory);
