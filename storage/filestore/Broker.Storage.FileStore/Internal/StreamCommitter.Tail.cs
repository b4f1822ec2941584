using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Under a sync interval, an append writes its own record: nats-server writes each message to its block file on the
/// publishing goroutine (flush in place) and acknowledges it then, and so does this store once the tail block's file
/// exists and has room reserved. The publish's ack then leaves at once, on the thread that appended, with no hop to
/// the committer's thread and back through a task; the committer keeps everything else (new block files and the
/// directory fsync, reservations, head markers, rewrites, checkpoints, the interval's fsync).
/// </summary>
internal sealed partial class StreamCommitter
{
    /// <summary>
    /// Writes the tail block's records not yet written (the caller's and any before it) on the calling thread, and
    /// makes them durable under the interval's policy (written to the operating system). It never waits for the I/O
    /// lock: while a round or the maintenance holds it, the next round writes them instead (the caller's ack waits
    /// for it as under the default policy). Takes <c>ioSync</c> (tried) then <c>sync</c>; the caller holds neither.
    /// </summary>
    public void WriteTail()
    {
        if (!Monitor.TryEnter(ioSync))
        {
            lock (sync)
            {
                ScheduleCommit();
            }

            return;
        }

        try
        {
            MessageBlock tail;
            byte[] cache;
            long from;
            long to;
            ulong last;
            lock (sync)
            {
                // A limit that moved the first sequence owes its head marker before the records after it, as a round
                // writes it (a marker may roll the tail to a new block: the round takes over then).
                if (!closed && failure is null)
                {
                    ledger.WriteHeadMarker();
                }

                if (closed || failure is not null || !TailWritable())
                {
                    ScheduleCommit();
                    return;
                }

                tail = blocks.Tail!;
                cache = tail.Cache!;
                from = tail.Flushed;
                to = tail.End;
                last = ledger.Last;
            }

            if (to > from)
            {
                tail.File!.Write(cache.AsSpan((int)from, (int)(to - from)), BlockFileHeader.Size + from);
            }

            lock (sync)
            {
                tail.Flushed = Math.Max(tail.Flushed, to);
                if (last > durable)
                {
                    Volatile.Write(ref durable, last);
                }

                // A cache the appends outgrew meanwhile may have been the one written: no round holds it now.
                blocks.ReturnRetired();
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or InvalidOperationException)
        {
            Fail(ex);
        }
        finally
        {
            Monitor.Exit(ioSync);
        }
    }

    /// <summary>
    /// Whether the tail block's new records can be written as they are, with nothing before them owed: its file is
    /// created and open, has room reserved up to its end, and the block before it is written (each block's bytes are
    /// written before its successor's, by a round or by this path, so that covers every earlier one). Caller holds
    /// <c>sync</c>.
    /// </summary>
    private bool TailWritable()
    {
        var tail = blocks.Tail;
        if (tail is null || !tail.Created || tail.File is null || tail.Cache is null || BlockFileHeader.Size + tail.End > tail.Allocated)
        {
            return false;
        }

        var count = blocks.Count;
        if (count < 2)
        {
            return true;
        }

        var previous = blocks[count - 2];
        return ReferenceEquals(previous, tail) || previous.Flushed >= previous.End;
    }

    /// <summary>
    /// Whether a round is owed for something other than the tail's records and a head marker (<see cref="WriteTail"/>
    /// writes both): rewrites, a new block file, the sequence reservation running low, waits or an fsync asked for.
    /// Caller holds <c>sync</c>.
    /// </summary>
    private bool RoundOwed() =>
        ledger.PendingRewrites > 0 || blocks.NewFiles || waiters is not null || forceSyncWanted
        || reservation.NextFor(ledger.Last, closing: false) != 0;
}
