using System.Buffers;
using Broker.Abstractions;
using Broker.Core.Internal.Subscriptions;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Messages waiting for the handlers of one in-process client. Producers on any thread copy each message into the
/// incoming batch under a short lock; the client's drain swaps the incoming batch with its own and runs the handlers
/// with no lock held. Two batches are kept and reused, their bytes in 16 KiB chunks of the shared array pool taken as
/// they fill and given back when the batch is drained, so the steady state allocates nothing per message and a client
/// with nothing queued holds no bytes (issue 25: a burst left up to 1 MiB per batch behind, two per client).
/// </summary>
/// <remarks>
/// Chunks rather than one array that doubles (issue 24 item 3): a batch holds what is queued plus less than a chunk,
/// never a copy while growing, and nothing on the large object heap; the doubling arrays of the slow-consumer storm's
/// stalled MQTT subscribers (128 KiB to 1 MiB each) went back to the shared array pool, which kept about 30 MB of them
/// after the storm. A message larger than a chunk gets an array of its own. The chunks come from the shared array pool
/// (per-core caches, no lock) rather than the output segment pool: an in-process client that drains every message
/// took and gave back a block under that pool's lock each time, which cost a JetStream file stream's asynchronous
/// publish (window 100) about 12% more CPU per message (docs/benchmarks.md, afternoon round).
/// </remarks>
internal sealed class DeliveryQueue
{
    // The size of a batch's chunks: the output pipes' segment size, below the large object heap.
    private const int ChunkBytes = OutputSegmentPool.BlockSize;

    // Messages a batch has room for at first, and above which a drained batch starts small again.
    private const int InitialEntries = 16;
    private const int RetainedEntries = 4096;

    private readonly Lock gate = new();
    private Batch incoming = new();
    private Batch draining = new();

    // Bytes enqueued and not yet handled; read without the lock for monitoring and stall decisions.
    private long queuedBytes;

    // Completed when the queue falls below resumeBytes after producers were told to stall. Under gate.
    private TaskCompletionSource? belowThreshold;
    private long resumeBytes;

    /// <summary>Whether messages wait in the incoming batch.</summary>
    public bool HasIncoming => Volatile.Read(ref incoming.Count) > 0;

    /// <summary>Bytes enqueued and not yet handled.</summary>
    public long QueuedBytes => Interlocked.Read(ref queuedBytes);

    /// <summary>Copies one message in; returns the bytes now queued. Safe from any thread.</summary>
    public long Enqueue(Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var headerLength = (int)headers.Length;
        var size = subject.Length + replyTo.Length + headerLength + (int)payload.Length;
        lock (gate)
        {
            var batch = incoming;
            var data = batch.Reserve(size, out var chunk, out var offset);
            var span = data.AsSpan(offset, size);
            subject.CopyTo(span);
            replyTo.CopyTo(span[subject.Length..]);
            headers.CopyTo(span[(subject.Length + replyTo.Length)..]);
            payload.CopyTo(span[(subject.Length + replyTo.Length + headerLength)..]);
            batch.Add(new Entry(subscription, chunk, offset, subject.Length, replyTo.Length, headerLength, size));
            return queuedBytes += size;
        }
    }

    /// <summary>
    /// A task that completes once fewer than <paramref name="resumeBytes"/> are queued, for producers to stall on while
    /// the handlers are far behind; <see langword="null"/> when they are not.
    /// </summary>
    public Task? StallWhileAbove(long stallBytes, long resumeBytes)
    {
        if (Interlocked.Read(ref queuedBytes) < stallBytes)
        {
            return null;
        }

        lock (gate)
        {
            if (queuedBytes < resumeBytes)
            {
                return null;
            }

            belowThreshold ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            this.resumeBytes = resumeBytes;
            return belowThreshold.Task;
        }
    }

    /// <summary>Takes every queued message for the drain, or <see langword="null"/> when none waits. Drain only.</summary>
    public Batch? Take()
    {
        lock (gate)
        {
            if (incoming.Count == 0)
            {
                return null;
            }

            (incoming, draining) = (draining, incoming);
            return draining;
        }
    }

    /// <summary>Ends the handling of a batch taken with <see cref="Take"/>: forgets its messages and keeps its memory. Drain only.</summary>
    public void Release(Batch batch)
    {
        var handled = batch.Used;
        batch.Reset();
        lock (gate)
        {
            queuedBytes -= handled;
            if (belowThreshold is { } waiting && queuedBytes < resumeBytes)
            {
                belowThreshold = null;
                waiting.TrySetResult();
            }
        }
    }

    /// <summary>
    /// A message waiting for a handler: its subscription and where its parts lie in the batch's bytes (the chunk, then
    /// subject, reply, headers and payload one after the other from the offset).
    /// </summary>
    public readonly record struct Entry(Subscription Subscription, int Chunk, int Offset, int SubjectLength, int ReplyLength, int HeaderLength, int Size);

    /// <summary>Messages and their bytes; written by producers under the queue's lock, read by the drain after a swap.</summary>
    public sealed class Batch
    {
        // Chunk slots kept by a drained batch; beyond them (a burst of several MiB) the slot arrays start small again.
        private const int RetainedChunks = 256;

        public int Count;
        // Empty until the first message: a client that never gets one (an adapter's connection with output
        // subscriptions only) costs two small objects.
        private Entry[] entries = [];

        // The arrays holding the messages (from the shared array pool), filled one after the other.
        private byte[][] chunks = [];
        private int chunkCount;

        // Bytes used in the last chunk.
        private int lastUsed;

        /// <summary>Bytes of the messages in the batch.</summary>
        public int Used { get; private set; }

        public ReadOnlySpan<Entry> Entries => entries.AsSpan(0, Count);

        /// <summary>The message at <paramref name="entry"/> as handlers see it.</summary>
        public BusMessage View(in Entry entry)
        {
            var data = chunks[entry.Chunk];
            var replyAt = entry.Offset + entry.SubjectLength;
            var headersAt = replyAt + entry.ReplyLength;
            var payloadAt = headersAt + entry.HeaderLength;
            return new BusMessage(
                data.AsSpan(entry.Offset, entry.SubjectLength),
                data.AsSpan(replyAt, entry.ReplyLength),
                entry.HeaderLength == 0 ? ReadOnlySequence<byte>.Empty : new ReadOnlySequence<byte>(data, headersAt, entry.HeaderLength),
                new ReadOnlySequence<byte>(data, payloadAt, entry.Size - (payloadAt - entry.Offset)));
        }

        /// <summary>Room for a message of <paramref name="size"/> bytes: the array, its chunk and the offset in it.</summary>
        public byte[] Reserve(int size, out int chunk, out int offset)
        {
            Used += size;
            if (chunkCount > 0 && chunks[chunkCount - 1].Length - lastUsed >= size)
            {
                chunk = chunkCount - 1;
                offset = lastUsed;
                lastUsed += size;
                return chunks[chunk];
            }

            var data = ArrayPool<byte>.Shared.Rent(Math.Max(size, ChunkBytes));
            if (chunkCount == chunks.Length)
            {
                Array.Resize(ref chunks, Math.Max(chunks.Length * 2, 4));
            }

            chunks[chunkCount] = data;
            chunk = chunkCount++;
            offset = 0;
            lastUsed = size;
            return data;
        }

        public void Add(in Entry entry)
        {
            if (Count == entries.Length)
            {
                Array.Resize(ref entries, Math.Max(entries.Length * 2, InitialEntries));
            }

            entries[Count] = entry;
            Volatile.Write(ref Count, Count + 1);
        }

        public void Reset()
        {
            // Drop the subscription references; keep the entries unless a burst made them large, give the bytes back.
            Array.Clear(entries, 0, Count);
            Count = 0;
            Used = 0;
            for (var i = 0; i < chunkCount; i++)
            {
                ArrayPool<byte>.Shared.Return(chunks[i]);
            }

            if (chunkCount > RetainedChunks)
            {
                chunks = [];
            }
            else
            {
                Array.Clear(chunks, 0, chunkCount);
            }

            chunkCount = 0;
            lastUsed = 0;

            if (entries.Length > RetainedEntries)
            {
                entries = new Entry[InitialEntries];
            }
        }
    }
}
