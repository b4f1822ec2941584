using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// A memory stream's limits (nats-server memstore's <c>cfg</c> and <c>enforce*Limit</c>): the configuration, whether
/// <see cref="DiscardPolicy.New"/> refuses an append, and the removals <see cref="DiscardPolicy.Old"/> makes after one
/// or after a configuration change (<c>max_msgs</c>, <c>max_bytes</c>, <c>max_msgs_per_subject</c>). <c>max_age</c>
/// is <see cref="AgeExpiry"/>'s. Not thread-safe: the store calls it under its lock.
/// </summary>
internal sealed class StreamLimits
{
    private readonly MessageLog log;
    private readonly SubjectIndex subjects;

    public StreamLimits(StreamStoreConfig config, MessageLog log, SubjectIndex subjects)
    {
        Config = config;
        this.log = log;
        this.subjects = subjects;
    }

    /// <summary>The stream's configuration as the store was last given it.</summary>
    public StreamStoreConfig Config { get; private set; }

    /// <summary>Why <see cref="DiscardPolicy.New"/> refuses a message, or null when it fits (nats-server's checks).</summary>
    /// <param name="record">The message's subject, when it has messages.</param>
    /// <param name="size">The message's size as counted (<see cref="MessageEntry.Size"/>).</param>
    public StoreStatus? CheckDiscardNew(SubjectRecord? record, ulong size)
    {
        if (Config.Discard != DiscardPolicy.New)
        {
            return null;
        }

        // At the per-subject limit an append replaces the subject's oldest message, unless that is refused too.
        var atSubjectLimit = record is not null && Config.MaxMessagesPerSubject > 0 && record.Messages >= (ulong)Config.MaxMessagesPerSubject;
        if (atSubjectLimit && Config.DiscardNewPerSubject)
        {
            return StoreStatus.MaxMessagesPerSubject;
        }

        if (Config.MaxMessages > 0 && log.Count >= (ulong)Config.MaxMessages && !atSubjectLimit)
        {
            return StoreStatus.MaxMessages;
        }

        if (Config.MaxBytes > 0 && log.Bytes + size > (ulong)Config.MaxBytes)
        {
            if (!atSubjectLimit)
            {
                return StoreStatus.MaxBytes;
            }

            // Dropping the subject's oldest message must make enough room.
            subjects.Refresh(record!);
            if (!log.TryGet(record!.First, out var oldest) || oldest.Size < size)
            {
                return StoreStatus.MaxBytes;
            }
        }

        return null;
    }

    /// <summary>After an append on <paramref name="record"/>: the per-subject, message and byte limits, oldest first.</summary>
    public void EnforceAfterAppend(SubjectRecord record, RemovalBuffer? removed)
    {
        EnforcePerSubject(record, removed);
        EnforceMessages(removed);
        EnforceBytes(removed);
    }

    /// <summary>
    /// Takes a new configuration and enforces it: the message and byte limits, and the per-subject limit on every
    /// subject when it was set or lowered.
    /// </summary>
    public void Update(StreamStoreConfig newConfig, RemovalBuffer? removed)
    {
        var oldPerSubject = Config.MaxMessagesPerSubject;
        Config = newConfig;
        EnforceMessages(removed);
        EnforceBytes(removed);
        if (newConfig.MaxMessagesPerSubject > 0 && (oldPerSubject <= 0 || newConfig.MaxMessagesPerSubject < oldPerSubject))
        {
            foreach (var record in subjects.ToList())
            {
                EnforcePerSubject(record, removed);
            }
        }
    }

    private void EnforcePerSubject(SubjectRecord record, RemovalBuffer? removed)
    {
        var max = Config.MaxMessagesPerSubject;
        if (max <= 0)
        {
            return;
        }

        while (record.Messages > (ulong)max)
        {
            subjects.Refresh(record);
            if (!log.Remove(record.First, secureErase: false, subjects, removed))
            {
                break;
            }
        }
    }

    private void EnforceMessages(RemovalBuffer? removed)
    {
        if (Config.Discard != DiscardPolicy.Old || Config.MaxMessages <= 0)
        {
            return;
        }

        while (log.Count > (ulong)Config.MaxMessages && log.Remove(log.First, secureErase: false, subjects, removed))
        {
        }
    }

    private void EnforceBytes(RemovalBuffer? removed)
    {
        if (Config.Discard != DiscardPolicy.Old || Config.MaxBytes <= 0)
        {
            return;
        }

        while (log.Bytes > (ulong)Config.MaxBytes && log.Remove(log.First, secureErase: false, subjects, removed))
        {
        }
    }
}
