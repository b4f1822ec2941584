using System.Buffers;
using System.Text;
using Broker.Abstractions;

namespace Broker.Samples.SampleStore;

/// <summary>
/// A deliberately plain stream store: a sorted dictionary of records behind one lock, linear scans for every query.
/// It shows what the contract asks of a store, not how to make one fast (see the memory store for that).
/// </summary>
public sealed class SampleStreamStore : IStreamStore
{
    private readonly object sync = new();
    private readonly SortedDictionary<ulong, Record> records = [];
    private readonly List<SampleConsumerStore> consumers = [];
    private StreamStoreConfig config;
    private StorageUpdateHandler? handler;
    private ulong last;
    private long lastTime;
    private ulong firstWhenEmpty;
    private bool closed;
    private Timer? expiry;
    private SubjectExpiredHandler? expiries;

    // Expired messages given to the subject expiry handler and not removed yet: a tick meanwhile does not report them twice.
    private readonly HashSet<ulong> handedOut = [];

    public SampleStreamStore(StreamStoreConfig config) => this.config = config;

    public StreamStoreConfig Config
    {
        get
        {
            lock (sync)
            {
                return config;
            }
        }
    }

    public ulong DurableSequence
    {
        get
        {
            lock (sync)
            {
                return last;
            }
        }
    }

    public IReadOnlyList<IConsumerStore> ConsumerStores
    {
        get
        {
            lock (sync)
            {
                return [.. consumers];
            }
        }
    }

    public StoreResult Store(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) =>
        Store(subject, headers, payload, default);

    public StoreResult Store(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, in StoreOptions options)
    {
        var record = new Record(0, Encoding.UTF8.GetString(subject), headers.ToArray(), payload.ToArray(), 0);
        List<Record> removed = [];
        lock (sync)
        {
            if (closed)
            {
                return new StoreResult(StoreStatus.Closed, 0, 0);
            }

            var sameSubject = records.Values.Where(r => r.Subject == record.Subject).ToList();
            var subjectFull = config.MaxMessagesPerSubject > 0 && sameSubject.Count >= config.MaxMessagesPerSubject;
            if (config.Discard == DiscardPolicy.New)
            {
                if (subjectFull && config.DiscardNewPerSubject)
                {
                    return new StoreResult(StoreStatus.MaxMessagesPerSubject, 0, 0);
                }

                if (!subjectFull && config.MaxMessages > 0 && records.Count >= config.MaxMessages)
                {
                    return new StoreResult(StoreStatus.MaxMessages, 0, 0);
                }

                var bytes = TotalBytes() + record.Size;
                if (config.MaxBytes > 0 && bytes > (ulong)config.MaxBytes && (!subjectFull || sameSubject[0].Size < record.Size))
                {
                    return new StoreResult(StoreStatus.MaxBytes, 0, 0);
                }
            }

            last++;
            lastTime = Math.Max(lastTime, options.Timestamp > 0 ? options.Timestamp : DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() * 1_000_000);
            record = record with { Sequence = last, Timestamp = lastTime, Expires = ExpiresAt(lastTime, options.TimeToLive) };
            records.Add(last, record);
            Trim(removed);
            ArmExpiry();
        }

        Notify(record, +1);
        removed.ForEach(r => Notify(r, -1));
        return new StoreResult(StoreStatus.Stored, record.Sequence, record.Timestamp);
    }

    public ulong Skip()
    {
        lock (sync)
        {
            last++;
            if (records.Count == 0)
            {
                firstWhenEmpty = last + 1;
            }

            return last;
        }
    }

    public ValueTask WaitForDurableAsync(ulong sequence, CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

    public LoadStatus Load(ulong sequence, StoredMessage message)
    {
        lock (sync)
        {
            if (records.TryGetValue(sequence, out var record))
            {
                record.CopyTo(message);
                return LoadStatus.Found;
            }

            return sequence > last ? LoadStatus.EndOfStream : LoadStatus.NotFound;
        }
    }

    public LoadStatus LoadNext(ReadOnlySpan<byte> filter, ulong start, StoredMessage message, out ulong scanned)
    {
        var filterText = Encoding.UTF8.GetString(filter);
        lock (sync)
        {
            var found = records.Values.FirstOrDefault(r => r.Sequence >= start && r.Matches(filterText));
            if (found is null)
            {
                scanned = last;
                return LoadStatus.EndOfStream;
            }

            found.CopyTo(message);
            scanned = found.Sequence;
            return LoadStatus.Found;
        }
    }

    public LoadStatus LoadLast(ReadOnlySpan<byte> filter, StoredMessage message)
    {
        var filterText = Encoding.UTF8.GetString(filter);
        lock (sync)
        {
            var found = records.Values.LastOrDefault(r => r.Matches(filterText));
            found?.CopyTo(message);
            return found is null ? LoadStatus.NotFound : LoadStatus.Found;
        }
    }

    public bool Remove(ulong sequence, bool secureErase = false)
    {
        Record? record;
        lock (sync)
        {
            if (!records.Remove(sequence, out record))
            {
                return false;
            }

            if (secureErase)
            {
                Array.Clear(record.Headers);
                Array.Clear(record.Payload);
            }

            AfterRemoval();
        }

        Notify(record, -1);
        return true;
    }

    public ulong Purge() => RemoveWhere(_ => true, emptyFirst: null);

    public ulong Purge(string subject, ulong sequence, ulong keep)
    {
        if (subject is "" or ">")
        {
            if (sequence > 1)
            {
                return Compact(sequence);
            }

            if (keep == 0)
            {
                return Purge();
            }

            ulong cutoff;
            lock (sync)
            {
                cutoff = records.Count <= (int)keep ? 0 : records.Keys.Skip(records.Count - (int)keep).First();
            }

            return cutoff == 0 ? 0 : Compact(cutoff);
        }

        HashSet<ulong> doomed;
        lock (sync)
        {
            var matching = records.Values.Where(r => r.Matches(subject) && (sequence <= 1 || r.Sequence < sequence)).Select(r => r.Sequence).ToList();
            var all = records.Values.Count(r => r.Matches(subject));
            var allowed = keep == 0 ? matching.Count : Math.Max(0, Math.Min(matching.Count, all - (int)keep));
            doomed = [.. matching.Take(allowed)];
        }

        return RemoveWhere(r => doomed.Contains(r.Sequence), emptyFirst: null);
    }

    public ulong Compact(ulong sequence)
    {
        if (sequence == 0)
        {
            return Purge();
        }

        lock (sync)
        {
            if (sequence > last)
            {
                last = sequence - 1;
            }
        }

        return RemoveWhere(r => r.Sequence < sequence, emptyFirst: sequence);
    }

    public void Truncate(ulong sequence)
    {
        RemoveWhere(r => r.Sequence > sequence, emptyFirst: null);
        lock (sync)
        {
            last = sequence;
            lastTime = records.Count == 0 ? lastTime : records.Values.Last().Timestamp;
            firstWhenEmpty = sequence == 0 ? 0 : sequence + 1;
        }
    }

    public ulong GetSequenceFromTime(long timestamp)
    {
        lock (sync)
        {
            return records.Values.FirstOrDefault(r => r.Timestamp >= timestamp)?.Sequence ?? last + 1;
        }
    }

    public StreamState GetState()
    {
        lock (sync)
        {
            if (records.Count == 0)
            {
                return new StreamState(0, 0, firstWhenEmpty, 0, last, lastTime, 0, 0);
            }

            var first = records.Values.First();
            var deleted = (int)(last - first.Sequence + 1) - records.Count;
            var lastStored = records.Values.Last();
            var deletedAfterLastStored = (int)(last - lastStored.Sequence);
            return new StreamState(
                (ulong)records.Count, TotalBytes(), first.Sequence, first.Timestamp, last, lastTime,
                records.Values.Select(r => r.Subject).Distinct().Count(), deleted - deletedAfterLastStored);
        }
    }

    public IReadOnlyList<ulong> GetDeletedSequences()
    {
        lock (sync)
        {
            if (records.Count == 0)
            {
                return [];
            }

            var first = records.Keys.First();
            var lastStored = records.Keys.Last();
            return [.. Enumerable.Range(0, (int)(lastStored - first + 1)).Select(i => first + (ulong)i).Where(s => !records.ContainsKey(s))];
        }
    }

    public SubjectState GetFilteredState(ulong start, ReadOnlySpan<byte> filter)
    {
        var filterText = Encoding.UTF8.GetString(filter);
        lock (sync)
        {
            var matches = records.Values.Where(r => r.Sequence >= start && r.Matches(filterText)).ToList();
            return matches.Count == 0 ? default : new SubjectState((ulong)matches.Count, matches[0].Sequence, matches[^1].Sequence);
        }
    }

    public IReadOnlyDictionary<string, SubjectState> GetSubjectsState(string filter)
    {
        lock (sync)
        {
            return records.Values.Where(r => r.Matches(filter)).GroupBy(r => r.Subject)
                .ToDictionary(g => g.Key, g => new SubjectState((ulong)g.Count(), g.First().Sequence, g.Last().Sequence));
        }
    }

    public PendingCount NumPending(ulong start, ReadOnlySpan<byte> filter, bool lastPerSubject)
    {
        var filterText = Encoding.UTF8.GetString(filter);
        lock (sync)
        {
            var matches = records.Values.Where(r => r.Matches(filterText));
            var total = lastPerSubject
                ? matches.GroupBy(r => r.Subject).Count(g => g.Last().Sequence >= start)
                : matches.Count(r => r.Sequence >= start);
            return new PendingCount((ulong)total, last);
        }
    }

    public void UpdateConfig(StreamStoreConfig config)
    {
        List<Record> removed = [];
        lock (sync)
        {
            this.config = config;
            Trim(removed);
            ArmExpiry();
        }

        removed.ForEach(r => Notify(r, -1));
    }

    public void RegisterStorageUpdates(StorageUpdateHandler? handler)
    {
        lock (sync)
        {
            this.handler = handler;
        }
    }

    // 1.4: told when an expiry removed the last message of a subject.
    public void RegisterSubjectExpiries(SubjectExpiredHandler? handler)
    {
        lock (sync)
        {
            expiries = handler;
        }
    }

    public IConsumerStore OpenConsumerStore(ConsumerStoreConfig config)
    {
        lock (sync)
        {
            var existing = consumers.Find(c => c.Config.Name == config.Name);
            if (existing is not null)
            {
                existing.UpdateConfig(config);
                return existing;
            }

            var created = new SampleConsumerStore(config, c =>
            {
                lock (sync)
                {
                    consumers.Remove(c);
                }
            });
            consumers.Add(created);
            return created;
        }
    }

    public ValueTask DeleteAsync(CancellationToken cancellationToken = default) => DisposeAsync();

    public ValueTask DisposeAsync()
    {
        lock (sync)
        {
            closed = true;
            expiry?.Dispose();
            records.Clear();
            consumers.Clear();
        }

        return ValueTask.CompletedTask;
    }

    private ulong TotalBytes() => (ulong)records.Values.Sum(r => (long)r.Size);

    // Limits in the order nats-server applies them: the subject's own, then messages, then bytes.
    private void Trim(List<Record> removed)
    {
        if (config.MaxMessagesPerSubject > 0)
        {
            foreach (var group in records.Values.GroupBy(r => r.Subject).ToList())
            {
                removed.AddRange(group.SkipLast((int)config.MaxMessagesPerSubject));
            }

            removed.ForEach(r => records.Remove(r.Sequence));
        }

        while (config.Discard == DiscardPolicy.Old && records.Count > 0
            && ((config.MaxMessages > 0 && records.Count > config.MaxMessages) || (config.MaxBytes > 0 && TotalBytes() > (ulong)config.MaxBytes)))
        {
            var oldest = records.Values.First();
            records.Remove(oldest.Sequence);
            removed.Add(oldest);
        }

        AfterRemoval();
    }

    private ulong RemoveWhere(Func<Record, bool> predicate, ulong? emptyFirst)
    {
        List<Record> removed;
        lock (sync)
        {
            removed = [.. records.Values.Where(predicate)];
            removed.ForEach(r => records.Remove(r.Sequence));
            AfterRemoval();
            if (records.Count == 0 && emptyFirst is { } next)
            {
                firstWhenEmpty = next;
            }
        }

        var bytes = removed.Sum(r => (long)r.Size);
        if (removed.Count > 0)
        {
            handler?.Invoke(-removed.Count, -bytes, 0, default);
        }

        return (ulong)removed.Count;
    }

    private void AfterRemoval()
    {
        if (records.Count == 0)
        {
            firstWhenEmpty = last + 1;
        }
    }

    // 0: no time to live of its own; long.MaxValue: never expires (max_age spares it too).
    private static long ExpiresAt(long timestamp, TimeSpan timeToLive) =>
        timeToLive == TimeSpan.Zero ? 0
        : timeToLive == Timeout.InfiniteTimeSpan ? long.MaxValue
        : timeToLive.Ticks >= (long.MaxValue - timestamp) / 100 ? long.MaxValue - 1 : timestamp + (timeToLive.Ticks * 100);

    private void ArmExpiry()
    {
        if (config.MaxAge <= TimeSpan.Zero && !records.Values.Any(r => r.Expires is > 0 and < long.MaxValue))
        {
            expiry?.Dispose();
            expiry = null;
            return;
        }

        expiry ??= new Timer(_ => Expire(), null, TimeSpan.FromMilliseconds(50), TimeSpan.FromMilliseconds(50));
    }

    private void Expire()
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() * 1_000_000;
        List<Record> removed;
        List<Record> kept;
        SubjectExpiredHandler? emptied;
        lock (sync)
        {
            var cutoff = config.MaxAge > TimeSpan.Zero ? now - (config.MaxAge.Ticks * 100) : long.MinValue;
            List<Record> expired = [.. records.Values.Where(r => !handedOut.Contains(r.Sequence) && ((r.Timestamp <= cutoff && r.Expires != long.MaxValue) || r.Expires is > 0 and < long.MaxValue && r.Expires <= now))];
            emptied = expiries;

            // The last of a subject stays until the handler returns (the order contract 1.4 prefers): the engine's
            // marker removes it (Nats-Rollup: sub), so a reader never finds the subject empty in between.
            var expiredSequences = expired.Select(r => r.Sequence).ToHashSet();
            kept = emptied is null ? [] : [.. expired.GroupBy(r => r.Subject).Select(g => g.MaxBy(r => r.Sequence)!)
                .Where(r => !records.Values.Any(k => k.Subject == r.Subject && !expiredSequences.Contains(k.Sequence)))
                .OrderBy(r => r.Sequence)];
            removed = [.. expired.Except(kept)];
            removed.ForEach(r => records.Remove(r.Sequence));
            kept.ForEach(r => handedOut.Add(r.Sequence));
            AfterRemoval();
        }

        removed.ForEach(r => Notify(r, -1));
        foreach (var record in kept)
        {
            emptied!.Invoke(record.Sequence, Encoding.UTF8.GetBytes(record.Subject), record.Headers);

            // Still there: no marker removed it (the message was a marker itself, or a newer message came).
            Record? left;
            lock (sync)
            {
                handedOut.Remove(record.Sequence);
                if (records.TryGetValue(record.Sequence, out left))
                {
                    records.Remove(record.Sequence);
                    AfterRemoval();
                }
            }

            if (left is not null)
            {
                Notify(left, -1);
            }
        }
    }

    private void Notify(Record record, int delta)
    {
        StorageUpdateHandler? current;
        lock (sync)
        {
            current = handler;
        }

        current?.Invoke(delta, delta * (long)record.Size, record.Sequence, Encoding.UTF8.GetBytes(record.Subject));
    }

    private sealed record Record(ulong Sequence, string Subject, byte[] Headers, byte[] Payload, long Timestamp, long Expires = 0)
    {
        // Counted like nats-server's memory store.
        public ulong Size => (ulong)(Encoding.UTF8.GetByteCount(Subject) + Headers.Length + Payload.Length + 16);

        public bool Matches(string filter) => Subjects.MatchesLiteral(Encoding.UTF8.GetBytes(filter), Encoding.UTF8.GetBytes(Subject));

        public void CopyTo(StoredMessage message) => message.Set(Sequence, Timestamp, Encoding.UTF8.GetBytes(Subject), Headers, Payload);
    }
}
