using Broker.Abstractions;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Contract 1.4's subject expiries of one file stream: the messages <c>max_age</c> or their times to live removed as the
/// last of their subjects, copied (subject and headers) as the ledger is about to remove them, and reported to the
/// engine's handler with the removals, outside the locks.
/// </summary>
/// <remarks>
/// Its state is guarded by the store's <c>sync</c>, handed to it: <see cref="Register"/> and <see cref="Note"/> run
/// under it, <see cref="Drain"/> takes it only to swap the list and calls the handler after releasing it.
/// </remarks>
internal sealed class SubjectExpiryReports(object sync, StreamLedger ledger, Func<ulong, StoredMessage, bool> loadLive)
{
    private readonly List<(ulong Sequence, byte[] Subject, byte[] Headers)> emptied = [];
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
        }
    }

    /// <summary>
    /// After a maintenance tick, outside the locks: tells the handler of the subjects expiries emptied. Those an update's
    /// <c>max_age</c> emptied wait for the next tick, as the engine updates under its own lock, which the handler takes.
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

        foreach (var (sequence, subject, headers) in taken)
        {
            current?.Invoke(sequence, subject, headers);
        }
    }

    /// <summary>The ledger's <see cref="StreamLedger.ExpiringLast"/>: copies the message out before it goes. Under <c>sync</c>.</summary>
    private void Note(ulong sequence)
    {
        if (loadLive(sequence, scratch))
        {
            emptied.Add((sequence, scratch.Subject.ToArray(), scratch.Headers.ToArray()));
        }
    }
}
