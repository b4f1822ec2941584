namespace Broker.Abstractions;

/// <summary>Where a store type keeps its data; decides which JetStream limit its bytes count against.</summary>
public enum StorageMedium
{
    /// <summary>Process memory: counts against <c>max_memory_store</c>.</summary>
    Memory,

    /// <summary>Disk or any other durable medium: counts against <c>max_file_store</c>.</summary>
    Disk,
}

/// <summary>What a stream does when a message limit is reached (nats-server <c>discard</c>).</summary>
public enum DiscardPolicy
{
    /// <summary>Remove the oldest messages to make room (<c>"old"</c>, the default).</summary>
    Old,

    /// <summary>Refuse the new message (<c>"new"</c>); the store returns a limit <see cref="StoreStatus"/>.</summary>
    New,
}

/// <summary>When a stream's messages may be removed (nats-server <c>retention</c>). Enforced by the engine, told to the store as a hint.</summary>
public enum RetentionPolicy
{
    /// <summary>Kept until a limit removes them (<c>"limits"</c>, the default).</summary>
    Limits,

    /// <summary>Removed once every consumer has acknowledged them (<c>"interest"</c>).</summary>
    Interest,

    /// <summary>Removed once one consumer has acknowledged them (<c>"workqueue"</c>).</summary>
    WorkQueue,
}

/// <summary>How a consumer's deliveries are acknowledged (nats-server <c>ack_policy</c>).</summary>
public enum ConsumerAckPolicy
{
    /// <summary>No acknowledgements; a delivery is final (<c>"none"</c>).</summary>
    None,

    /// <summary>An acknowledgement covers every earlier delivery (<c>"all"</c>).</summary>
    All,

    /// <summary>Each delivery is acknowledged on its own (<c>"explicit"</c>, the default).</summary>
    Explicit,
}

/// <summary>The outcome of <see cref="IStreamStore.Store(ReadOnlySpan{byte}, in System.Buffers.ReadOnlySequence{byte}, in System.Buffers.ReadOnlySequence{byte})"/>.</summary>
public enum StoreStatus
{
    /// <summary>The message was stored (not necessarily durable yet: see <see cref="IStreamStore.WaitForDurableAsync"/>).</summary>
    Stored,

    /// <summary>Refused under <see cref="DiscardPolicy.New"/>: the stream holds <see cref="StreamStoreConfig.MaxMessages"/> messages ("maximum messages exceeded").</summary>
    MaxMessages,

    /// <summary>Refused under <see cref="DiscardPolicy.New"/>: the message would exceed <see cref="StreamStoreConfig.MaxBytes"/> ("maximum bytes exceeded").</summary>
    MaxBytes,

    /// <summary>
    /// Refused under <see cref="DiscardPolicy.New"/> with <see cref="StreamStoreConfig.DiscardNewPerSubject"/>: the subject holds
    /// <see cref="StreamStoreConfig.MaxMessagesPerSubject"/> messages ("maximum messages per subject exceeded").
    /// </summary>
    MaxMessagesPerSubject,

    /// <summary>The store cannot hold a message this large ("message too large").</summary>
    MessageTooLarge,

    /// <summary>The store was disposed or deleted ("store is closed").</summary>
    Closed,

    /// <summary>The medium failed (disk full, I/O error); the store logged the cause.</summary>
    Failed,

    /// <summary>The store cannot do what <see cref="StoreOptions"/> asked for ("not supported by the store"; contract 1.4).</summary>
    NotSupported,
}

/// <summary>The outcome of a load (<see cref="IStreamStore.Load"/>, <see cref="IStreamStore.LoadNext"/>, <see cref="IStreamStore.LoadLast"/>).</summary>
public enum LoadStatus
{
    /// <summary>The message was copied into the caller's <see cref="StoredMessage"/>.</summary>
    Found,

    /// <summary>No such message at or below the last sequence: removed, purged or never matching ("no message found").</summary>
    NotFound,

    /// <summary>The sequence is past the last one stored ("stream store EOF").</summary>
    EndOfStream,
}
