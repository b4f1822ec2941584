using Broker.Abstractions;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Contract 1.4's subject expiries of one file stream: the messages <c>max_age</c> or their times to live expire as the
/// last of their subjects are kept, copied (subject and headers) and reported to the engine's handler after the tick,
/// outside the locks, before they go: the marker the engine stores rolls the subject up and so removes the message,
/// and a reader never finds the subject empty between the two (nats-server's <c>handleRemovalOrSdm</c>). What the
/// handler left (no marker: the message was one, or a newer message came) is removed after it returns.
/// </summary>
/// <remarks>
/// Its state is guarded by the store's <c>sync</c>, handed to it: <see cref="Register"/> and <see cref="Note"/> run
/// under it, <see cref="Drain"/> takes it only to swap the list and calls the handler after releasing it. A message
/// handed to the handler stays pending until the removal after it, so a tick meanwhile neither removes nor reports it
/// again (two markers).
/// </remarks>
internal sealed class SubjectExpiryReports(object sync, StreamLedger ledger, Func<ulong, StoredMessage, bool> loadLive, Action<ulong[]> removeLeft)
{
    private readonly List<(ulong Sequence, byte[] Subject, byte[] Headers)> emptied = [];
    private readonly HashSet<ulong> pending = [];
    private readonly StoredMessage scratch = new();
    private SubjectExpiredHandler? handler;

    /// <summary>Sets (or with null removes) the handler; the ledger notes expiring last messages only while one is set.</summary>
    public void Register(SubjectExpiredHandler? expiries)
    {
        lock (sync)
        {
            handler = expiries;
            ledger.ExpiringLast = expiries is null ? null : Note;
            emptied.Clear();
            pending.Clear();
        }
    }

    /// <summary>
    /// After a maintenance tick, outside the locks: tells the handler of the subjects expiries empty, then removes the
    /// messages it left. Those an update's <c>max_age</c> expired wait for the next tick, as the engine updates under its
    /// own lock, which the handler takes.
    /// </summary>
    public void Drain()
    {
        SubjectExpiredHandler? current;
        (ulong Sequence, byte[] Subject, byte[] Headers)[] taken;
        lock (sync)
        {
            if (emptied.Count == 0)
            {
                return;
            }

            current = handler;
            taken = [.. emptied];
            emptied.Clear();
        }

        var left = new ulong[taken.Length];
        try
        {
            for (var i = 0; i < taken.Length; i++)
            {
                var (sequence, subject, headers) = taken[i];
                left[i] = sequence;
                current?.Invoke(sequence, subject, headers);
            }
        }
        finally
        {
            removeLeft(left);
            lock (sync)
            {
                foreach (var sequence in left)
                {
                    pending.Remove(sequence);
                }
            }
        }
    }

    /// <summary>
    /// The ledger's <see cref="StreamLedger.ExpiringLast"/>: copies the message out for the handler and keeps it (true)
    /// while a handler is set; a message already handed out is kept and not reported again. Under <c>sync</c>.
    /// </summary>
    private bool Note(ulong sequence)
    {
        if (pending.Contains(sequence))
        {
            return true;
        }

        if (handler is null || !loadLive(sequence, scratch))
        {
            return false;
        }

        pending.Add(sequence);
        emptied.Add((sequence, scratch.Subject.ToArray(), scratch.Headers.ToArray()));
        return true;
    }
}
