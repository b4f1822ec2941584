using Broker.Abstractions;

namespace Broker.Core.Auth;

/// <summary>
/// JetStream for one account, as nats-server's account <c>jetstream</c> key: <c>enabled</c> (this object with its
/// defaults), <c>disabled</c> (<see cref="Enabled"/> false, or no object at all) or a block of limits. The JetStream
/// plugin reads it through <see cref="IAccountDirectory"/> (<see cref="BrokerAccount.JetStream"/>). A limit of -1 (the
/// default of each) adds no limit of the account's own; the server's JetStream limits still apply.
/// </summary>
public sealed class AccountJetStreamOptions
{
    /// <summary>Whether the account has JetStream. Default true (the object says <c>enabled</c>).</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>Bytes the account's memory streams may hold (<c>max_memory</c>, <c>max_mem</c>). Default -1.</summary>
    public long MaxMemory { get; set; } = -1;

    /// <summary>Bytes the account's file streams may hold (<c>max_store</c>, <c>max_file</c>). Default -1.</summary>
    public long MaxStorage { get; set; } = -1;

    /// <summary>Most streams of the account (<c>max_streams</c>). Default -1.</summary>
    public int MaxStreams { get; set; } = -1;

    /// <summary>Most consumers of the account (<c>max_consumers</c>). Default -1.</summary>
    public int MaxConsumers { get; set; } = -1;

    /// <summary>Most unacknowledged messages a consumer may allow (<c>max_ack_pending</c>). Default -1.</summary>
    public int MaxAckPending { get; set; } = -1;

    /// <summary>Largest <c>max_bytes</c> of a memory stream (<c>mem_max_stream_bytes</c>). Default -1.</summary>
    public long MemoryMaxStreamBytes { get; set; } = -1;

    /// <summary>Largest <c>max_bytes</c> of a file stream (<c>store_max_stream_bytes</c>). Default -1.</summary>
    public long StorageMaxStreamBytes { get; set; } = -1;

    /// <summary>Whether every stream must set <c>max_bytes</c> (<c>max_bytes_required</c>). Default false.</summary>
    public bool MaxBytesRequired { get; set; }

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public AccountJetStreamOptions Clone() => (AccountJetStreamOptions)MemberwiseClone();

    /// <summary>The limits plugins see, or null when JetStream is not enabled.</summary>
    internal AccountJetStreamLimits? ToLimits() => Enabled
        ? new AccountJetStreamLimits
        {
            MaxMemory = MaxMemory,
            MaxStorage = MaxStorage,
            MaxStreams = MaxStreams,
            MaxConsumers = MaxConsumers,
            MaxAckPending = MaxAckPending,
            MemoryMaxStreamBytes = MemoryMaxStreamBytes,
            StorageMaxStreamBytes = StorageMaxStreamBytes,
            MaxBytesRequired = MaxBytesRequired,
        }
        : null;
}
