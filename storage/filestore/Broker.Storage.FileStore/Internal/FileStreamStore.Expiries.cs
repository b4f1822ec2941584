using Broker.Abstractions;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Contract 1.4's subject expiries: the messages <c>max_age</c> or their times to live removed as the last of their
/// subjects, copied (subject and headers) under the lock as the ledger is about to remove them, and reported to the
/// handler with the removals, outside the locks.
/// </summary>
internal sealed partial class FileStreamStore
{
    private readonly List<(ulong Sequence, byte[] Subject, byte[] Headers)> emptied = [];
    private SubjectExpiredHandler? expiries;
    private StoredMessage? expiringScratch;

    public void RegisterSubjectExpiries(SubjectExpiredHandler? handler)
    {
        lock (sync)
        {
            expiries = handler;
            ledger.ExpiringLast = handler is null ? null : NoteExpiringLast;
            emptied.Clear();
        }
    }

    /// <summary>The ledger's <see cref="StreamLedger.ExpiringLast"/>: copies the message out before it goes. Lock held.</summary>
    private void NoteExpiringLast(ulong sequence)
    {
        var message = expiringScratch ??= new StoredMessage();
        if (blocks.Find(sequence) is { } block && LoadLive(block, sequence, message))
        {
            emptied.Add((sequence, message.Subject.ToArray(), message.Headers.ToArray()));
        }
    }

    /// <summary>
    /// After a maintenance tick, outside the locks: the removals, then the subjects expiries emptied. Those an update's
    /// <c>max_age</c> emptied wait for the next tick, as the engine updates under its own lock, which the handler takes.
    /// </summary>
    private void AfterTick()
    {
        DrainRemovalEvents();
        DrainSubjectExpiries();
    }

    /// <summary>Tells the handler of the subjects expiries emptied, outside the locks.</summary>
    private void DrainSubjectExpiries()
    {
        SubjectExpiredHandler? handler;
        (ulong Sequence, byte[] Subject, byte[] Headers)[] taken;
        lock (sync)
        {
            if (emptied.Count == 0)
            {
                return;
            }

            handler = expiries;
            taken = [.. emptied];
            emptied.Clear();
        }

        foreach (var (sequence, subject, headers) in taken)
        {
            handler?.Invoke(sequence, subject, headers);
        }
    }
}
