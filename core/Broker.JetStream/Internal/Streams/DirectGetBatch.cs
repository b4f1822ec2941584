using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// nats-server 2.11's direct get of many messages (<c>getDirectRequest</c> with a <c>batch</c>, <c>getDirectMulti</c>):
/// the messages from a sequence (optionally only those of <c>next_by_subj</c>), or the last message of each subject
/// matching <c>multi_last</c> as of <c>up_to_seq</c> / <c>up_to_time</c>, each sent to the reply subject with the
/// direct get headers plus <c>Nats-Num-Pending</c> (how many are left after it) and <c>Nats-Last-Sequence</c> (the
/// message sent before it, 0 for the first), then a <c>204 EOB</c> status with the same counters (and
/// <c>Nats-UpTo-Sequence</c> for <c>multi_last</c>). <c>max_bytes</c> (64 MiB by default, nats-server's
/// <c>max_pending</c>) ends a batch after the message that reaches it. Reads only; thread-safe as the store is.
/// </summary>
internal sealed class DirectGetBatch(IStreamStore store, DirectGet sender)
{
    /// <summary>nats-server <c>MAX_PENDING_SIZE</c>, the default <c>max_pending</c> a batch's <c>max_bytes</c> falls back to.</summary>
    private const int DefaultMaxBytes = 64 * 1024 * 1024;

    /// <summary>The most subjects a <c>multi_last</c> request may match (nats-server's <c>maxAllowedResponses</c>).</summary>
    private const int MaxMultiResults = 1024;

    /// <summary>A batch from <c>seq</c> (or the first), of every subject or of <c>next_by_subj</c>.</summary>
    public void Batch(ReadOnlySpan<byte> reply, MessageGetRequest request)
    {
        var filter = string.IsNullOrEmpty(request.NextBySubject) ? [] : Encoding.UTF8.GetBytes(request.NextBySubject);
        var sequence = request.Sequence;
        var (pending, validThrough) = store.NumPending(sequence, filter, lastPerSubject: false);
        var maxBytes = request.MaxBytes != 0 ? request.MaxBytes : DefaultMaxBytes;
        var stored = new StoredMessage();
        ulong last = 0;
        var sentBytes = 0;
        for (var i = 0; i < request.Batch; i++)
        {
            if (store.LoadNext(filter, sequence, stored, out _) != LoadStatus.Found)
            {
                if (i > 0)
                {
                    break;
                }

                Status(reply, "NATS/1.0 404 Message Not Found\r\n\r\n"u8);
                return;
            }

            Send(reply, stored, pending, last);
            pending = pending > 0 ? pending - 1 : 0;
            last = stored.Sequence;
            sequence = stored.Sequence + 1;
            sentBytes += stored.Subject.Length + stored.Headers.Length + stored.Payload.Length;
            if (sentBytes >= maxBytes)
            {
                break;
            }
        }

        if (store.GetState().LastSequence > validThrough)
        {
            // Stored meanwhile: counted again from where the batch stopped.
            pending = store.NumPending(sequence, filter, lastPerSubject: false).Total;
        }

        Status(reply, $"NATS/1.0 204 EOB\r\nNats-Num-Pending: {pending}\r\nNats-Last-Sequence: {last}\r\n\r\n");
    }

    /// <summary>The last message of each subject matching <c>multi_last</c>, in stream order, from <c>seq</c> on.</summary>
    public void MultiLast(ReadOnlySpan<byte> reply, MessageGetRequest request)
    {
        var state = store.GetState();
        var upTo = request.UpToSequence;
        if (request.UpToTime is { } time)
        {
            upTo = store.GetSequenceFromTime(time);
            if (upTo <= state.FirstSequence)
            {
                Status(reply, "NATS/1.0 404 No Results\r\n\r\n"u8);
                return;
            }

            // The first sequence at or after the time: the one before is the last as of it.
            upTo--;
        }

        if (upTo == 0)
        {
            upTo = state.LastSequence;
        }

        var sequences = LastSequences(request.MultiLast!, upTo);
        if (sequences is null)
        {
            Status(reply, "NATS/1.0 413 Too Many Results\r\n\r\n"u8);
            return;
        }

        if (sequences.Count == 0)
        {
            Status(reply, "NATS/1.0 404 No Results\r\n\r\n"u8);
            return;
        }

        var maxBytes = request.MaxBytes != 0 ? request.MaxBytes : DefaultMaxBytes;
        var stored = new StoredMessage();
        var pending = (ulong)sequences.Count - 1;
        ulong last = 0;
        var sentBytes = 0;
        var sent = 0;
        foreach (var sequence in sequences)
        {
            if (sequence < request.Sequence)
            {
                pending = pending > 0 ? pending - 1 : 0;
                continue;
            }

            if (store.Load(sequence, stored) != LoadStatus.Found)
            {
                Status(reply, "NATS/1.0 404 Message Not Found\r\n\r\n"u8);
                return;
            }

            Send(reply, stored, pending, last);
            pending = pending > 0 ? pending - 1 : 0;
            last = sequence;
            sentBytes += stored.Subject.Length + stored.Headers.Length + stored.Payload.Length;
            if (sentBytes >= maxBytes || (request.Batch > 0 && ++sent >= request.Batch))
            {
                break;
            }
        }

        Status(reply, $"NATS/1.0 204 EOB\r\nNats-Num-Pending: {pending}\r\nNats-Last-Sequence: {last}\r\nNats-UpTo-Sequence: {upTo}\r\n\r\n");
    }

    /// <summary>
    /// nats-server <c>MultiLastSeqs</c>: each matching subject's last sequence at or below <paramref name="upTo"/>,
    /// ascending, once each; null when more than <see cref="MaxMultiResults"/>.
    /// </summary>
    private List<ulong>? LastSequences(List<string> filters, ulong upTo)
    {
        var found = new SortedSet<ulong>();
        var probe = new StoredMessage();
        foreach (var filter in filters)
        {
            foreach (var (subject, state) in store.GetSubjectsState(filter))
            {
                if (state.Last <= upTo)
                {
                    found.Add(state.Last);
                }
                else if (state.Messages > 1 && state.First <= upTo)
                {
                    // The subject's last is newer: walk its messages up to the limit.
                    var bytes = Encoding.UTF8.GetBytes(subject);
                    ulong before = 0;
                    for (var next = state.First; next <= upTo && store.LoadNext(bytes, next, probe, out _) == LoadStatus.Found && probe.Sequence <= upTo; next = probe.Sequence + 1)
                    {
                        before = probe.Sequence;
                    }

                    if (before != 0)
                    {
                        found.Add(before);
                    }
                }
            }

            if (found.Count > MaxMultiResults)
            {
                return null;
            }
        }

        return [.. found];
    }

    private void Send(ReadOnlySpan<byte> reply, StoredMessage stored, ulong pending, ulong last) => sender.Send(reply, stored, counters: true, pending, last);

    private void Status(ReadOnlySpan<byte> reply, string status) => sender.SendStatus(reply, Encoding.ASCII.GetBytes(status));

    private void Status(ReadOnlySpan<byte> reply, ReadOnlySpan<byte> status) => sender.SendStatus(reply, status);
}
