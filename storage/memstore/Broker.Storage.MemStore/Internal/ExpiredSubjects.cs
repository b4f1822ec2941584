namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// The subjects an expiry empties (contract 1.4's <see cref="Broker.Abstractions.SubjectExpiredHandler"/>): a message
/// about to expire as the last of its subject is kept, noted under the store's lock with copies of its subject and
/// headers, and reported after the lock is released; the marker the engine stores rolls the subject up and so removes
/// it, and a reader never finds the subject empty between the two (nats-server's <c>handleRemovalOrSdm</c>). What the
/// handler left is removed after it returns. Exists only while a handler is registered.
/// </summary>
/// <remarks>
/// A message handed to the handler stays pending until that removal, so an expiry meanwhile neither removes nor
/// reports it again (two markers).
/// </remarks>
internal sealed class ExpiredSubjects
{
    private readonly List<(ulong Sequence, byte[] Subject, byte[] Headers)> noted = [];
    private readonly HashSet<ulong> pending = [];

    /// <summary>
    /// Whether the message about to expire stays for its subject's marker: it is the last of its subject (noted), or
    /// it was handed out already. Lock held.
    /// </summary>
    public bool Keep(MessageLog log, ulong sequence)
    {
        if (pending.Contains(sequence))
        {
            return true;
        }

        if (!log.TryGet(sequence, out var entry) || entry.Subject.Messages != 1)
        {
            return false;
        }

        pending.Add(sequence);
        noted.Add((sequence, entry.Subject.Subject, entry.Data.AsSpan(0, entry.HeadersLength).ToArray()));
        return true;
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

    /// <summary>Ends the wait of a message handed out (it is removed, or about to be). Lock held.</summary>
    public void Settle(ulong sequence) => pending.Remove(sequence);
}
