namespace Broker.Abstractions;

/// <summary>
/// What a stream store needs to know about its stream: identity, location and the limits the store enforces itself
/// (message count, bytes, age, per subject, discard policy), as nats-server's stores do. The engine validates every
/// value and creates a new instance on each change (<see cref="IStreamStore.UpdateConfig"/>).
/// </summary>
public sealed record StreamStoreConfig
{
    /// <summary>The stream name (1-255 characters without <c>.</c>, <c>*</c>, <c>&gt;</c>, whitespace or path separators).</summary>
    public required string Name { get; init; }

    /// <summary>The account the stream belongs to. Default <c>"$G"</c> (nats-server's global account).</summary>
    public string Account { get; init; } = "$G";

    /// <summary>The storage type the stream's configuration names (<c>"memory"</c>, <c>"file"</c>, a third party's). Default <c>"file"</c>.</summary>
    public string StorageType { get; init; } = "file";

    /// <summary>
    /// The folder reserved for this stream, <c>&lt;store_dir&gt;/jetstream/&lt;account&gt;/streams/&lt;name&gt;</c> (nats-server's
    /// layout), or <see langword="null"/> when JetStream has no store directory. Stores that keep nothing on disk
    /// ignore it. Default <see langword="null"/>.
    /// </summary>
    public string? Directory { get; init; }

    /// <summary>The stream's subjects (informational: the engine routes messages). Default empty.</summary>
    public IReadOnlyList<string> Subjects { get; init; } = [];

    /// <summary>The retention policy (a hint: the engine removes acknowledged messages itself). Default <see cref="RetentionPolicy.Limits"/>.</summary>
    public RetentionPolicy Retention { get; init; }

    /// <summary>Most messages kept; -1 means unlimited. Default -1.</summary>
    public long MaxMessages { get; init; } = -1;

    /// <summary>Most bytes kept (as <see cref="StreamState.Bytes"/> counts them); -1 means unlimited. Default -1.</summary>
    public long MaxBytes { get; init; } = -1;

    /// <summary>Oldest message kept, by its store timestamp; <see cref="TimeSpan.Zero"/> means unlimited. Default zero.</summary>
    public TimeSpan MaxAge { get; init; }

    /// <summary>Most messages kept per subject; -1 means unlimited. Default -1.</summary>
    public long MaxMessagesPerSubject { get; init; } = -1;

    /// <summary>What happens at a limit. Default <see cref="DiscardPolicy.Old"/>.</summary>
    public DiscardPolicy Discard { get; init; }

    /// <summary>
    /// Under <see cref="DiscardPolicy.New"/>, refuse a message whose subject already holds
    /// <see cref="MaxMessagesPerSubject"/> messages instead of removing the subject's oldest. Default <see langword="false"/>.
    /// </summary>
    public bool DiscardNewPerSubject { get; init; }

    /// <summary>
    /// The stream's <c>compression</c> (nats-server 2.10): how a store that compresses keeps the stream's data at rest.
    /// A store without compression keeps the data as it is, as nats-server's memory store does. Default
    /// <see cref="StreamCompression.None"/>. (Contract 1.2.)
    /// </summary>
    public StreamCompression Compression { get; init; }

    /// <summary>
    /// Opaque bytes the engine stores with the stream (its JSON configuration and creation time). A durable store
    /// keeps them with the stream and returns them unchanged from <see cref="IStreamStoreProvider.RecoverAsync"/>.
    /// Default empty.
    /// </summary>
    public ReadOnlyMemory<byte> Metadata { get; init; }
}

/// <summary>What a consumer-state store needs to know about its consumer.</summary>
public sealed record ConsumerStoreConfig
{
    /// <summary>The consumer name (durable name, or the generated name of an ephemeral consumer).</summary>
    public required string Name { get; init; }

    /// <summary>How deliveries are acknowledged; decides how <see cref="IConsumerStore.UpdateAcks"/> moves the ack floor. Default <see cref="ConsumerAckPolicy.Explicit"/>.</summary>
    public ConsumerAckPolicy AckPolicy { get; init; } = ConsumerAckPolicy.Explicit;

    /// <summary>Most deliveries of one message; -1 means unlimited. Default -1.</summary>
    public int MaxDeliver { get; init; } = -1;

    /// <summary>
    /// Keep the state in memory even when the stream is durable (nats-server <c>mem_storage</c>, set by ordered
    /// consumers). Default <see langword="false"/>.
    /// </summary>
    public bool MemoryOnly { get; init; }

    /// <summary>Whether the consumer is durable; a store may discard an ephemeral consumer's state at restart. Default <see langword="false"/>.</summary>
    public bool Durable { get; init; }

    /// <summary>Opaque engine bytes (the consumer's JSON configuration and creation time), returned unchanged after recovery. Default empty.</summary>
    public ReadOnlyMemory<byte> Metadata { get; init; }
}

/// <summary>A stream's <c>compression</c> setting, as nats-server names it in stream configurations.</summary>
public enum StreamCompression
{
    /// <summary><c>"none"</c>: data kept as written.</summary>
    None,

    /// <summary><c>"s2"</c>: data compressed at rest where the store can (the file store compresses sealed blocks).</summary>
    S2,
}
