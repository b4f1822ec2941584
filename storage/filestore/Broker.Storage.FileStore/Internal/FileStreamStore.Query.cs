using Broker.Abstractions;

namespace Broker.Storage.FileStore.Internal;

/// <summary>State queries, configuration, the update handler, consumers and deletion.</summary>
internal sealed partial class FileStreamStore
{
    public StreamState GetState()
    {
        lock (sync)
        {
            var deleted = messages == 0 ? 0 : (int)Math.Min(int.MaxValue, last - first + 1 - messages);
            return new StreamState(messages, bytes, first, messages == 0 ? 0 : firstTimestamp, last, lastTimestamp, subjects.Count, deleted);
        }
    }

    public IReadOnlyList<ulong> GetDeletedSequences()
    {
        lock (sync)
        {
            var deleted = new List<ulong>();
            if (messages == 0)
            {
                return deleted;
            }

            var expected = first;
            for (var s = NextLiveSequence(first); s != 0 && s <= last; s = NextLiveSequence(s + 1))
            {
                for (; expected < s; expected++)
                {
                    deleted.Add(expected);
                }

                expected = s + 1;
            }

            return deleted;
        }
    }

    public SubjectState GetFilteredState(ulong start, ReadOnlySpan<byte> filter)
    {
        lock (sync)
        {
            return FilteredStateLocked(start, filter);
        }
    }

    private SubjectState FilteredStateLocked(ulong start, ReadOnlySpan<byte> filter)
    {
        if (start < first)
        {
            start = first;
        }

        if (messages == 0 || start > last)
        {
            return default;
        }

        if (SubjectFilter.IsAll(filter))
        {
            if (start == first)
            {
                return new SubjectState(messages, first, PreviousLiveSequence(last));
            }

            var count = 0UL;
            var firstFound = 0UL;
            var lastFound = 0UL;
            for (var s = NextLiveSequence(start); s != 0; s = NextLiveSequence(s + 1))
            {
                count++;
                firstFound = firstFound == 0 ? s : firstFound;
                lastFound = s;
            }

            return new SubjectState(count, firstFound, lastFound);
        }

        // Whole subjects that lie at or after start count from the index; a subject straddling start is scanned.
        ulong total = 0, lowest = 0, highest = 0;
        var literal = SubjectFilter.IsLiteral(filter);
        foreach (var index in subjects.Indexes())
        {
            if (subjects[index].Last < start || (literal ? !subjects[index].Subject.AsSpan().SequenceEqual(filter) : !SubjectFilter.Matches(subjects[index].Subject, filter)))
            {
                continue;
            }

            var subjectFirst = ResolveSubjectFirst(index);
            ulong count;
            ulong from;
            if (subjectFirst >= start)
            {
                count = subjects[index].Count;
                from = subjectFirst;
            }
            else
            {
                (count, from) = CountSubjectFrom(subjects[index].Subject, start, subjects[index].Last);
            }

            if (count == 0)
            {
                continue;
            }

            total += count;
            lowest = lowest == 0 ? from : Math.Min(lowest, from);
            highest = Math.Max(highest, subjects[index].Last);
        }

        return new SubjectState(total, lowest, highest);
    }

    private (ulong Count, ulong First) CountSubjectFrom(byte[] subject, ulong start, ulong stop)
    {
        ulong count = 0, firstFound = 0;
        for (var s = NextLiveSequence(start); s != 0 && s <= stop; s = NextLiveSequence(s + 1))
        {
            if (SubjectOf(FindBlock(s)!, s, out _).SequenceEqual(subject))
            {
                count++;
                firstFound = firstFound == 0 ? s : firstFound;
            }
        }

        return (count, firstFound);
    }

    public IReadOnlyDictionary<string, SubjectState> GetSubjectsState(string filter)
    {
        var filterBytes = System.Text.Encoding.UTF8.GetBytes(filter ?? "");
        lock (sync)
        {
            var result = new Dictionary<string, SubjectState>(StringComparer.Ordinal);
            foreach (var index in subjects.Indexes())
            {
                if (SubjectFilter.Matches(subjects[index].Subject, filterBytes))
                {
                    var subjectFirst = ResolveSubjectFirst(index);
                    result[SubjectIndex.ToText(subjects[index].Subject)] = new SubjectState(subjects[index].Count, subjectFirst, subjects[index].Last);
                }
            }

            return result;
        }
    }

    public PendingCount NumPending(ulong start, ReadOnlySpan<byte> filter, bool lastPerSubject)
    {
        lock (sync)
        {
            if (!lastPerSubject)
            {
                return new PendingCount(FilteredStateLocked(start, filter).Messages, last);
            }

            ulong total = 0;
            foreach (var index in subjects.Indexes())
            {
                if (subjects[index].Last >= start && SubjectFilter.Matches(subjects[index].Subject, filter))
                {
                    total++;
                }
            }

            return new PendingCount(total, last);
        }
    }

    public void UpdateConfig(StreamStoreConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        lock (ioSync)
        {
            lock (sync)
            {
                ThrowIfUnusable();
                this.config = config with { Directory = directory };
                StreamMetaFile.Write(fs, directory, this.config, keySalt, key);

                // Lower per-subject limits apply at once, as nats-server's enforcePerSubjectLimit on update.
                if (config.MaxMessagesPerSubject > 0)
                {
                    foreach (var index in subjects.Indexes().ToList())
                    {
                        while (subjects.Find(subjects[index].Subject) == index && subjects[index].Count > (ulong)config.MaxMessagesPerSubject)
                        {
                            var oldest = ResolveSubjectFirst(index);
                            if (oldest == 0 || !RemoveLive(oldest, RemovalReason.Limit))
                            {
                                break;
                            }
                        }
                    }
                }

                EnforceStreamLimits();
                ExpireByAge();
                ScheduleCommit();
            }
        }

        DrainRemovalEvents();
    }

    public void RegisterStorageUpdates(StorageUpdateHandler? handler)
    {
        lock (sync)
        {
            updates = handler;
        }
    }

    public IConsumerStore OpenConsumerStore(ConsumerStoreConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        lock (sync)
        {
            ThrowIfUnusable();
            var existing = consumers.Find(c => c.Config.Name == config.Name);
            if (existing is not null)
            {
                existing.UpdateConfig(config);
                return existing;
            }

            var consumer = FileConsumerStore.Create(this, fs, Path.Combine(directory, ConsumersFolder, FileConsumerStore.FolderName(config.Name)), config, key, options, logger);
            consumers.Add(consumer);
            return consumer;
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

    internal void ForgetConsumer(FileConsumerStore consumer)
    {
        lock (sync)
        {
            consumers.Remove(consumer);
        }
    }

    public async ValueTask DeleteAsync(CancellationToken cancellationToken = default)
    {
        if (!BeginClose())
        {
            return;
        }

        await StopBackgroundAsync().ConfigureAwait(false);
        foreach (var consumer in SnapshotConsumers())
        {
            await consumer.CloseAsync().ConfigureAwait(false);
        }

        lock (ioSync)
        {
            lock (sync)
            {
                CloseBlocks();
                blocks.Clear();
            }

            // Remove meta.inf first (durably), so a crash mid-way never leaves a half-deleted stream that recovers.
            var meta = Path.Combine(directory, StreamMetaFile.FileName);
            if (fs.FileExists(meta))
            {
                fs.DeleteFile(meta);
                fs.SyncDirectory(directory);
            }

            fs.DeleteDirectory(directory);
            var parent = Path.GetDirectoryName(directory);
            if (!string.IsNullOrEmpty(parent) && fs.DirectoryExists(parent))
            {
                fs.SyncDirectory(parent);
            }
        }

        FailWaiters(new ObjectDisposedException(nameof(FileStreamStore), "stream deleted"));
    }

    private void DrainRemovalEvents()
    {
        if (RemovalEvents.Any)
        {
            StorageUpdateHandler? handler;
            lock (sync)
            {
                handler = updates;
            }

            RemovalEvents.Drain(handler);
        }
    }
}
