namespace Broker.Abstractions;

/// <summary>
/// The JetStream limits of one account (nats-server's account <c>jetstream { }</c> block; since contract 1.3), as
/// <see cref="BrokerAccount.JetStream"/> reports them. A value of -1 (the default of each) means the account adds no
/// limit of its own; the server's <c>max_memory_store</c> and <c>max_file_store</c> still apply. An account configured
/// with <c>jetstream: enabled</c> has these defaults.
/// </summary>
public sealed record AccountJetStreamLimits
{
    /// <summary>The limits of <c>jetstream: enabled</c>: -1 everywhere, <see cref="MaxBytesRequired"/> false.</summary>
    public static readonly AccountJetStreamLimits Unlimited = new();

    /// <summary>Bytes the account's memory streams may hold (<c>max_memory</c>, <c>max_mem</c>). Default -1.</summary>
    public long MaxMemory { get; init; } = -1;

    /// <summary>Bytes the account's file streams may hold (<c>max_store</c>, <c>max_file</c>). Default -1.</summary>
    public long MaxStorage { get; init; } = -1;

    /// <summary>Most streams of the account (<c>max_streams</c>). Default -1.</summary>
    public int MaxStreams { get; init; } = -1;

    /// <summary>Most consumers of the account (<c>max_consumers</c>). Default -1.</summary>
    public int MaxConsumers { get; init; } = -1;

    /// <summary>Most unacknowledged messages a consumer of the account may allow (<c>max_ack_pending</c>). Default -1.</summary>
    public int MaxAckPending { get; init; } = -1;

    /// <summary>Largest <c>max_bytes</c> of a memory stream (<c>mem_max_stream_bytes</c>). Default -1.</summary>
    public long MemoryMaxStreamBytes { get; init; } = -1;

    /// <summary>Largest <c>max_bytes</c> of a file stream (<c>store_max_stream_bytes</c>). Default -1.</summary>
    public long StorageMaxStreamBytes { get; init; } = -1;

    /// <summary>Whether every stream must set <c>max_bytes</c> (<c>max_bytes_required</c>). Default false.</summary>
    public bool MaxBytesRequired { get; init; }
}
