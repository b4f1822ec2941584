using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// A stream's messages in memory (nats-server's <c>memstore.go</c>), the owner implementing the storage contract over
/// collaborators with their own state: the messages by sequence and the counters (<see cref="MessageLog"/>), the
/// subjects with their per-subject counts (<see cref="SubjectIndex"/>), the limits (<see cref="StreamLimits"/>) and
/// <c>max_age</c> with the messages' own times to live (<see cref="AgeExpiry"/>). One lock, <see cref="gate"/>, guards all of them; the storage-update
/// handler is called after it is released. The contract's verbs by kind: appends (<c>.Append.cs</c>), loads
/// (<c>.Load.cs</c>), removals (<c>.Remove.cs</c>), state queries (<c>.State.cs</c>).
/// </summary>
internal sealed partial class MemoryStreamStore : IStreamStore
{
    private readonly Lock gate = new();
    private readonly MessageLog log = new();
    private readonly SubjectIndex subjects;
    private readonly StreamLimits limits;
    private readonly AgeExpiry age;
    private readonly List<MemoryConsumerStore> consumers = [];
    private StorageUpdateHandler? updates;
    private SubjectExpiredHandler? expiries;
    private ExpiredSubjects? emptied;
    private bool closed;

    public MemoryStreamStore(StreamStoreConfig config)
    {
        subjects = new SubjectIndex(log);
        limits = new StreamLimits(config, log, subjects);
        age = new AgeExpiry(log, subjects, ExpireMessages);
    }

    public StreamStoreConfig Config
    {
        get
        {
            lock (gate)
            {
                return limits.Config;
            }
        }
    }

    // Memory is as durable as it gets: everything stored is "durable" at once.
    public ulong DurableSequence => log.Last;

    public ValueTask WaitForDurableAsync(ulong sequence, CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

    public void UpdateConfig(StreamStoreConfig newConfig)
    {
        ArgumentNullException.ThrowIfNull(newConfig);
        var removed = RemovalBuffer.Rent();
        lock (gate)
        {
            ThrowIfClosed();
            limits.Update(newConfig, Tracked(removed));
            age.Schedule(newConfig.MaxAge, closed);
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

    public void RegisterSubjectExpiries(SubjectExpiredHandler? handler)
    {
        lock (gate)
        {
            expiries = handler;
            emptied = handler is null ? null : emptied ?? new ExpiredSubjects();
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
            age.Dispose();
            log.ReleaseAll();
            subjects.Clear();
            consumers.Clear();
            updates = null;
            expiries = null;
            emptied = null;
        }

        return ValueTask.CompletedTask;
    }

    private void ThrowIfClosed() => ObjectDisposedException.ThrowIf(closed, this);

    /// <summary>The timer's call: removes every expired message under the lock and re-arms for the next.</summary>
    private void ExpireMessages()
    {
        var removed = RemovalBuffer.Rent();
        SubjectExpiredHandler? handler;
        (ulong Sequence, byte[] Subject, byte[] Headers)[]? expired = null;
        lock (gate)
        {
            var maxAge = limits.Config.MaxAge;
            if (closed || (maxAge <= TimeSpan.Zero && age.Ttls is null))
            {
                RemovalBuffer.Return(removed);
                return;
            }

            age.RemoveExpired(maxAge, Tracked(removed), emptied);
            handler = expiries;
            if (emptied is { Any: true })
            {
                // Re-armed once the kept messages are gone: until then the first would be due at once, again and again.
                expired = emptied.Take();
            }
            else
            {
                age.Schedule(maxAge, closed);
            }
        }

        ReportRemovals(removed);
        if (expired is not null)
        {
            try
            {
                foreach (var (sequence, subject, headers) in expired)
                {
                    handler?.Invoke(sequence, subject, headers);
                }
            }
            finally
            {
                RemoveExpiredLeft(expired);
            }
        }
    }

    /// <summary>Removes the expired messages kept for delete markers that the engine's markers did not roll up.</summary>
    private void RemoveExpiredLeft((ulong Sequence, byte[] Subject, byte[] Headers)[] expired)
    {
        var removed = RemovalBuffer.Rent();
        lock (gate)
        {
            foreach (var (sequence, _, _) in expired)
            {
                emptied?.Settle(sequence);
                if (!closed)
                {
                    log.Remove(sequence, secureErase: false, subjects, Tracked(removed));
                }
            }

            age.Schedule(limits.Config.MaxAge, closed);
        }

        ReportRemovals(removed);
    }

    /// <summary>The buffer to note removals in, when a handler wants to hear of them. Lock held.</summary>
    private RemovalBuffer? Tracked(RemovalBuffer removed) => updates is null ? null : removed;

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

    /// <summary>Tells the handler about a bulk removal (purge, compaction, truncation) as one update.</summary>
    private void ReportBulk(ulong purged, ulong bytes)
    {
        if (purged > 0 && updates is { } handler)
        {
            handler(-(long)purged, -(long)bytes, 0, default);
        }
    }
}
