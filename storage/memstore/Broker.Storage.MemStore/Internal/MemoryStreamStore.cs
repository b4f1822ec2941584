using System.Buffers;
using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// A stream's messages in memory (nats-server's <c>memstore.go</c>): a map from sequence to message, a map from
/// subject to its record, the stream counters, and a timer for <c>max_age</c>. One lock guards everything; the
/// storage-update handler is called after it is released. Split by concern: appends and limits
/// (<c>.Append.cs</c>), loads (<c>.Load.cs</c>), removals (<c>.Remove.cs</c>), state queries (<c>.State.cs</c>),
/// age expiry (<c>.Age.cs</c>).
/// </summary>
internal sealed partial class MemoryStreamStore : IStreamStore
{
    private readonly Lock gate = new();
    private readonly Dictionary<ulong, MessageEntry> messages = [];
    private readonly Dictionary<byte[], SubjectRecord> subjects = new(ByteKeyComparer.Instance);
    private readonly Dictionary<byte[], SubjectRecord>.AlternateLookup<ReadOnlySpan<byte>> subjectsBySpan;
    private readonly List<MemoryConsumerStore> consumers = [];
    private StreamStoreConfig config;
    private StorageUpdateHandler? updates;
    private bool closed;

    // nats-server's StreamState counters.
    private ulong messageCount;
    private ulong byteCount;
    private ulong firstSequence;
    private long firstTimestamp;
    private ulong lastSequence;
    private long lastTimestamp;

    public MemoryStreamStore(StreamStoreConfig config)
    {
        this.config = config;
        subjectsBySpan = subjects.GetAlternateLookup<ReadOnlySpan<byte>>();
    }

    public StreamStoreConfig Config
    {
        get
        {
            lock (gate)
            {
                return config;
            }
        }
    }

    // Memory is as durable as it gets: everything stored is "durable" at once.
    public ulong DurableSequence => Volatile.Read(ref lastSequence);

    public ValueTask WaitForDurableAsync(ulong sequence, CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

    public void UpdateConfig(StreamStoreConfig newConfig)
    {
        ArgumentNullException.ThrowIfNull(newConfig);
        var removed = RemovalBuffer.Rent();
        lock (gate)
        {
            ThrowIfClosed();
            var oldPerSubject = config.MaxMessagesPerSubject;
            config = newConfig;
            EnforceMessageLimit(removed);
            EnforceBytesLimit(removed);
            if (newConfig.MaxMessagesPerSubject > 0 && (oldPerSubject <= 0 || newConfig.MaxMessagesPerSubject < oldPerSubject))
            {
                foreach (var record in subjects.Values.ToList())
                {
                    EnforcePerSubjectLimit(record, removed);
                }
            }

            ScheduleAgeCheck();
        }

        ReportRemovals(removed);
    }

    public void RegisterStorageUpdates(StorageUpdateHandler? handler)
    {
        lock (gate)
        {
            updates = handler;
        }
    }

    public IConsumerStore OpenConsumerStore(ConsumerStoreConfig consumerConfig)
    {
        ArgumentNullException.ThrowIfNull(consumerConfig);
        lock (gate)
        {
            ThrowIfClosed();
            foreach (var existing in consumers)
            {
                if (existing.Config.Name == consumerConfig.Name)
                {
                    existing.UpdateConfig(consumerConfig);
                    return existing;
                }
            }

            var store = new MemoryConsumerStore(consumerConfig, this);
            consumers.Add(store);
            return store;
        }
    }

    public IReadOnlyList<IConsumerStore> ConsumerStores
    {
        get
        {
            lock (gate)
            {
                return [.. consumers];
            }
        }
    }

    internal void ForgetConsumer(MemoryConsumerStore store)
    {
        lock (gate)
        {
            consumers.Remove(store);
        }
    }

    public ValueTask DeleteAsync(CancellationToken cancellationToken = default) => DisposeAsync();

    public ValueTask DisposeAsync()
    {
        lock (gate)
        {
            if (closed)
            {
                return ValueTask.CompletedTask;
            }

            closed = true;
            ageTimer?.Dispose();
            ageTimer = null;
            foreach (var entry in messages.Values)
            {
                ReturnBuffer(entry.Data);
            }

            messages.Clear();
            subjects.Clear();
            consumers.Clear();
            messageCount = byteCount = 0;
            updates = null;
        }

        return ValueTask.CompletedTask;
    }

    private void ThrowIfClosed() => ObjectDisposedException.ThrowIf(closed, this);

    private static long Now() => (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * 100;

    private static void ReturnBuffer(byte[] data)
    {
        if (data.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(data);
        }
    }

    /// <summary>Tells the handler about removed messages, outside the lock, and recycles the buffer.</summary>
    private void ReportRemovals(RemovalBuffer removed)
    {
        var handler = updates;
        if (handler is not null)
        {
            for (var i = 0; i < removed.Count; i++)
            {
                var (sequence, subject, size) = removed[i];
                handler(-1, -(long)size, sequence, subject.Subject);
            }
        }

        RemovalBuffer.Return(removed);
    }
}
