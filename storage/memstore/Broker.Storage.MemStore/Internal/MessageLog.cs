using System.Buffers;
using System.Security.Cryptography;
using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// A memory stream's messages by sequence and the sequence range (nats-server memstore's <c>msgs</c> map and
/// <c>state</c>): the first and last sequences and their times, the message and byte counts, and the pooled buffers
/// holding each message. Removing a message unlinks it from its subject in the <see cref="SubjectIndex"/> passed in.
/// Not thread-safe: the store calls it under its lock.
/// </summary>
internal sealed class MessageLog
{
    private readonly Dictionary<ulong, MessageEntry> messages = [];
    private ulong last;

    /// <summary>Messages stored.</summary>
    public ulong Count { get; private set; }

    /// <summary>Bytes stored, as nats-server's memory store counts them (<see cref="MessageEntry.Size"/>).</summary>
    public ulong Bytes { get; private set; }

    /// <summary>The first stored sequence; one past <see cref="Last"/> when empty.</summary>
    public ulong First { get; private set; }

    /// <summary>The time of the first stored message (Unix nanoseconds), or 0.</summary>
    public long FirstTimestamp { get; private set; }

    /// <summary>The last sequence given out (stored, skipped or truncated to). Readable without the store's lock.</summary>
    public ulong Last => Volatile.Read(ref last);

    /// <summary>The time of the last sequence given out (Unix nanoseconds).</summary>
    public long LastTimestamp { get; private set; }

    /// <summary>The current time as nats-server stores it: Unix nanoseconds (100 ns resolution).</summary>
    public static long Now() => (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * 100;

    public bool TryGet(ulong sequence, out MessageEntry entry) => messages.TryGetValue(sequence, out entry);

    public bool Contains(ulong sequence) => messages.ContainsKey(sequence);

    /// <summary>The time for the next sequence: now, or the last time when the clock went back.</summary>
    public long NextTimestamp() => Math.Max(Now(), LastTimestamp);

    /// <summary>Stores a copy of headers then payload as <paramref name="sequence"/> (the next one) on <paramref name="subject"/>.</summary>
    public void Append(ulong sequence, long timestamp, SubjectRecord subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, ulong size)
    {
        var headersLength = (int)headers.Length;
        var payloadLength = (int)payload.Length;
        var data = headersLength + payloadLength == 0 ? [] : ArrayPool<byte>.Shared.Rent(headersLength + payloadLength);
        headers.CopyTo(data);
        payload.CopyTo(data.AsSpan(headersLength));
        if (Count == 0)
        {
            First = sequence;
            FirstTimestamp = timestamp;
        }

        messages.Add(sequence, new MessageEntry(subject, data, headersLength, payloadLength, timestamp));
        Count++;
        Bytes += size;
        Volatile.Write(ref last, sequence);
        LastTimestamp = timestamp;
    }

    /// <summary>Gives out the next sequence without a message (nats-server <c>SkipMsg</c>).</summary>
    public ulong Skip()
    {
        var sequence = last + 1;
        Volatile.Write(ref last, sequence);
        LastTimestamp = NextTimestamp();
        if (Count == 0)
        {
            First = sequence + 1;
            FirstTimestamp = 0;
        }

        return sequence;
    }

    /// <summary>
    /// Removes one message, unlinks it from its subject and recycles (or first overwrites) its buffer; notes it in
    /// <paramref name="removed"/> when given.
    /// </summary>
    public bool Remove(ulong sequence, bool secureErase, SubjectIndex subjects, RemovalBuffer? removed)
    {
        if (!messages.Remove(sequence, out var entry))
        {
            return false;
        }

        var size = entry.Size;
        Count--;
        Bytes -= Math.Min(size, Bytes);
        if (sequence == First)
        {
            AdvanceFirst();
        }

        subjects.RemoveMessage(entry.Subject, sequence);
        if (secureErase)
        {
            RandomNumberGenerator.Fill(entry.Data.AsSpan(0, entry.HeadersLength + entry.PayloadLength));
        }

        ReturnBuffer(entry.Data);
        removed?.Add(sequence, entry.Subject, size);
        return true;
    }

    /// <summary>Removes every message below <paramref name="sequence"/>, which becomes the first (nats-server <c>Compact</c>).</summary>
    public ulong RemoveBelow(ulong sequence, SubjectIndex subjects, out ulong bytes)
    {
        ulong purged = 0;
        bytes = 0;
        for (var seq = First; seq < sequence; seq++)
        {
            if (messages.Remove(seq, out var entry))
            {
                purged++;
                bytes += entry.Size;
                subjects.RemoveMessage(entry.Subject, seq);
                ReturnBuffer(entry.Data);
            }
        }

        Count -= purged;
        Bytes -= bytes;
        First = sequence;
        FirstTimestamp = 0;
        AdvanceFirst();
        return purged;
    }

    /// <summary>Removes every message above <paramref name="sequence"/>, which becomes the last (nats-server <c>Truncate</c>).</summary>
    public ulong RemoveAbove(ulong sequence, SubjectIndex subjects, out ulong bytes)
    {
        ulong purged = 0;
        bytes = 0;
        var lastTime = messages.TryGetValue(sequence, out var kept) ? kept.Timestamp : LastTimestamp;
        for (var seq = last; seq > sequence; seq--)
        {
            if (messages.Remove(seq, out var entry))
            {
                purged++;
                bytes += entry.Size;
                subjects.RemoveMessage(entry.Subject, seq);
                ReturnBuffer(entry.Data);
            }
        }

        Count -= purged;
        Bytes -= bytes;
        Volatile.Write(ref last, sequence);
        LastTimestamp = lastTime;
        if (Count == 0)
        {
            First = sequence + 1;
            FirstTimestamp = 0;
        }

        return purged;
    }

    /// <summary>Moves the last sequence (compacting past the end, truncating to nothing); the messages are left as they are.</summary>
    public void MoveLast(ulong sequence, long timestamp)
    {
        Volatile.Write(ref last, sequence);
        LastTimestamp = timestamp;
    }

    /// <summary>Drops every message; <paramref name="nextFirst"/> becomes the first sequence. The subjects are the caller's to clear.</summary>
    public void Reset(ulong nextFirst)
    {
        ReleaseAll();
        First = nextFirst;
        FirstTimestamp = 0;
    }

    /// <summary>Drops every message and recycles the buffers, leaving the sequence range as it was (the store closing).</summary>
    public void ReleaseAll()
    {
        foreach (var entry in messages.Values)
        {
            ReturnBuffer(entry.Data);
        }

        messages.Clear();
        Count = 0;
        Bytes = 0;
    }

    /// <summary>The first message at or after <paramref name="timestamp"/>, or one past the last (nats-server <c>GetSeqFromTime</c>).</summary>
    public ulong SequenceFromTime(long timestamp)
    {
        if (Count == 0)
        {
            return last + 1;
        }

        if (timestamp <= FirstTimestamp)
        {
            return First;
        }

        if (timestamp > LastTimestamp)
        {
            return last + 1;
        }

        // Timestamps never decrease with the sequence: binary search for the first stored message at or after the
        // time, stepping over deleted sequences.
        var result = last + 1;
        var low = First;
        var high = last;
        while (low <= high)
        {
            var mid = low + ((high - low) / 2);
            var probe = mid;
            MessageEntry entry = default;
            while (probe <= high && !messages.TryGetValue(probe, out entry))
            {
                probe++;
            }

            if (probe <= high && entry.Timestamp < timestamp)
            {
                low = probe + 1;
                continue;
            }

            if (probe <= high)
            {
                result = probe;
            }

            if (mid == 0)
            {
                break;
            }

            high = mid - 1;
        }

        return result;
    }

    /// <summary>The sequences between the first and the last that hold no message.</summary>
    public List<ulong> DeletedSequences()
    {
        var deleted = new List<ulong>();
        if (Count == 0)
        {
            return deleted;
        }

        for (var seq = First; seq <= last; seq++)
        {
            if (!messages.ContainsKey(seq))
            {
                deleted.Add(seq);
            }
        }

        return deleted;
    }

    /// <summary>nats-server's <c>State</c> from the counters.</summary>
    public StreamState State(int subjectCount)
    {
        var span = Count == 0 || last < First ? 0 : last - First + 1;
        var deleted = span > Count ? (int)(span - Count) : 0;
        return new StreamState(Count, Bytes, First, FirstTimestamp, last, LastTimestamp, subjectCount, deleted);
    }

    /// <summary>
    /// The first message from <paramref name="from"/> to <paramref name="to"/> on <paramref name="only"/> (a literal
    /// filter), or matching <paramref name="filter"/>, or any when <paramref name="all"/>; 0 when none.
    /// </summary>
    public ulong FindFirst(ulong from, ulong to, SubjectRecord? only, ReadOnlySpan<byte> filter, bool all, out MessageEntry found)
    {
        for (var seq = from; seq <= to; seq++)
        {
            if (messages.TryGetValue(seq, out found) && Matches(found, only, filter, all))
            {
                return seq;
            }
        }

        found = default;
        return 0;
    }

    /// <summary>The last stored sequence, scanning back from the last over deleted ones; 0 when empty.</summary>
    public ulong LastStored()
    {
        for (var seq = last; seq >= First && seq > 0; seq--)
        {
            if (messages.ContainsKey(seq))
            {
                return seq;
            }
        }

        return 0;
    }

    /// <summary>Counts the messages from <paramref name="from"/> to <paramref name="to"/> matching as <see cref="FindFirst"/> does.</summary>
    public SubjectState CountRange(ulong from, ulong to, SubjectRecord? only, ReadOnlySpan<byte> filter, bool all)
    {
        ulong count = 0;
        ulong first = 0;
        ulong lastFound = 0;
        for (var seq = from; seq <= to; seq++)
        {
            if (messages.TryGetValue(seq, out var entry) && Matches(entry, only, filter, all))
            {
                count++;
                if (first == 0)
                {
                    first = seq;
                }

                lastFound = seq;
            }
        }

        return new SubjectState(count, first, lastFound);
    }

    /// <summary>The first stored sequence of <paramref name="record"/> from <paramref name="from"/> to <paramref name="to"/>, or 0.</summary>
    public ulong FirstOf(SubjectRecord record, ulong from, ulong to)
    {
        for (var seq = from; seq <= to; seq++)
        {
            if (messages.TryGetValue(seq, out var entry) && ReferenceEquals(entry.Subject, record))
            {
                return seq;
            }
        }

        return 0;
    }

    /// <summary>The last stored sequence of <paramref name="record"/> from <paramref name="from"/> down to <paramref name="downTo"/>, or 0.</summary>
    public ulong LastOf(SubjectRecord record, ulong from, ulong downTo)
    {
        for (var seq = from; seq >= downTo && seq > 0; seq--)
        {
            if (messages.TryGetValue(seq, out var entry) && ReferenceEquals(entry.Subject, record))
            {
                return seq;
            }
        }

        return 0;
    }

    private static bool Matches(in MessageEntry entry, SubjectRecord? only, ReadOnlySpan<byte> filter, bool all) =>
        all || (only is not null ? ReferenceEquals(entry.Subject, only) : Subjects.MatchesLiteral(filter, entry.Subject.Subject));

    /// <summary>Moves the first sequence to the next stored message (or past the last when none is left).</summary>
    private void AdvanceFirst()
    {
        if (Count == 0)
        {
            First = last + 1;
            FirstTimestamp = 0;
            return;
        }

        for (var seq = First; seq <= last; seq++)
        {
            if (messages.TryGetValue(seq, out var entry))
            {
                First = seq;
                FirstTimestamp = entry.Timestamp;
                return;
            }
        }
    }

    private static void ReturnBuffer(byte[] data)
    {
        if (data.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(data);
        }
    }
}
