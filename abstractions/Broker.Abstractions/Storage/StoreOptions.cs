namespace Broker.Abstractions;

/// <summary>
/// How one message is appended by <see cref="IStreamStore.Store(ReadOnlySpan{byte}, in System.Buffers.ReadOnlySequence{byte}, in System.Buffers.ReadOnlySequence{byte}, in StoreOptions)"/>
/// (contract 1.4). The default value appends as the three-argument <c>Store</c> does: at the current time, kept until a
/// limit removes it.
/// </summary>
public readonly record struct StoreOptions
{
    /// <summary>
    /// The message's store time in nanoseconds since the Unix epoch (UTC), as a mirror keeps its origin's and a restore
    /// keeps the snapshot's; 0 for the current time. A time before the stream's last message's is raised to it, so a
    /// stream's timestamps never go back. The stream's <see cref="StreamStoreConfig.MaxAge"/> counts from this time.
    /// Needs <see cref="StoreFeatures.Timestamps"/>. Default 0.
    /// </summary>
    public long Timestamp { get; init; }

    /// <summary>
    /// The message's own time to live (nats-server 2.11's <c>Nats-TTL</c>): the store removes the message once its
    /// timestamp plus this has passed, also after a restart, and reports the removal as it reports
    /// <see cref="StreamStoreConfig.MaxAge"/>'s. <see cref="TimeSpan.Zero"/> for none (the stream's limits alone apply);
    /// <see cref="System.Threading.Timeout.InfiniteTimeSpan"/> for never, which exempts the message from
    /// <see cref="StreamStoreConfig.MaxAge"/> too. A finite time to live longer than <see cref="StreamStoreConfig.MaxAge"/>
    /// does not keep the message past it (nats-server 2.11's stores). The other limits (messages, bytes, per subject)
    /// and removals apply as to any message. The engine gives whole seconds, but a store should take any positive
    /// value; a removal may come up to a second late. Needs <see cref="StoreFeatures.MessageTtl"/>. Default
    /// <see cref="TimeSpan.Zero"/>.
    /// </summary>
    public TimeSpan TimeToLive { get; init; }

    /// <summary>Whether these are the default options (current time, no time to live).</summary>
    public bool IsDefault => Timestamp == 0 && TimeToLive == TimeSpan.Zero;
}

/// <summary>What the stores of a provider can do beyond contract 1.3 (see <see cref="IStreamStoreProvider.Features"/>).</summary>
[Flags]
public enum StoreFeatures
{
    /// <summary>Nothing beyond contract 1.3: appends take the current time, no time to live.</summary>
    None = 0,

    /// <summary>Appends keep a given <see cref="StoreOptions.Timestamp"/>.</summary>
    Timestamps = 1,

    /// <summary>Appends honour <see cref="StoreOptions.TimeToLive"/>.</summary>
    MessageTtl = 2,

    /// <summary>
    /// The stores call the handler of <see cref="IStreamStore.RegisterSubjectExpiries"/> when <c>max_age</c> or a
    /// message's time to live removes the last message of a subject (nats-server 2.11's subject delete markers).
    /// </summary>
    SubjectExpiries = 4,
}
