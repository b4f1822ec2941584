namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// The subjects an expiry emptied (contract 1.4's <see cref="Broker.Abstractions.SubjectExpiredHandler"/>): noted under
/// the store's lock before each expired message goes, with copies of its subject and headers (the message's memory
/// is released with it), and reported after the lock is released. Exists only while a handler is registered.
/// </summary>
internal sealed class ExpiredSubjects
{
    private readonly List<(ulong Sequence, byte[] Subject, byte[] Headers)> noted = [];

    /// <summary>Notes the message about to expire when it is the last of its subject. Lock held.</summary>
    public void Note(MessageLog log, ulong sequence)
    {
        if (log.TryGet(sequence, out var entry) && entry.Subject.Messages == 1)
        {
            noted.Add((sequence, entry.Subject.Subject, entry.Data.AsSpan(0, entry.HeadersLength).ToArray()));
        }
    }

    /// <summary>Whether some subject was noted. Lock held.</summary>
    public bool Any => noted.Count > 0;

    /// <summary>Takes what was noted, leaving this empty. Lock held.</summary>
    public (ulong Sequence, byte[] Subject, byte[] Headers)[] Take()
    {
        var taken = noted.ToArray();
        noted.Clear();
        return taken;
    }
}
