using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// <c>msgs/index.db</c>: a checkpoint of the stream state (counters, each block's range, counters and not-live bitmap,
/// the per-subject counters, the messages' times to live) as of a position in the tail block. The committer writes it only after the data it
/// describes is fsynced, so it never claims more than the disk holds; a restart loads it and replays only the records
/// after that position, so recovery time follows the tail, not the stream. Encrypted with the stream key when
/// encryption is on. Owns when the next one is wanted (asked for, or the block layout changed) and when the last was
/// taken. Not thread-safe: the stream store's lock guards every call but <see cref="Write"/>.
/// </summary>
internal sealed class StreamCheckpoint
{
    internal const string FileName = "index.db";
    private const uint Magic = 0x3149534A; // "JSI1"

    private readonly IStorageFileSystem fs;
    private readonly string path;
    private readonly StreamKey? key;
    private readonly BlockSet blocks;
    private readonly SubjectCounters subjects;
    private readonly StreamLedger ledger;

    private bool wanted;
    private long lastTicks = Environment.TickCount64;

    public StreamCheckpoint(IStorageFileSystem fs, string blocksDirectory, StreamKey? key, BlockSet blocks, SubjectCounters subjects, StreamLedger ledger)
    {
        this.fs = fs;
        path = Path.Combine(blocksDirectory, FileName);
        this.key = key;
        this.blocks = blocks;
        this.subjects = subjects;
        this.ledger = ledger;
    }

    /// <summary>Whether the next commit round should write one (at most once a second).</summary>
    public bool Wanted => wanted || blocks.ChangedSinceCheckpoint;

    /// <summary>Whether <c>index.db</c> exists (recovery reports one it rejected).</summary>
    public bool Exists => fs.FileExists(path);

    /// <summary>Asks for a checkpoint with the next commit round.</summary>
    public void Request() => wanted = true;

    /// <summary>Whether a checkpoint is wanted and the last is at least a second old: a commit round takes one.</summary>
    public bool IsDue(long now) => Wanted && now - lastTicks >= 1000;

    /// <summary>Whether <paramref name="interval"/> has passed since the last checkpoint.</summary>
    public bool IntervalElapsed(long now, TimeSpan interval) => now - lastTicks >= (long)interval.TotalMilliseconds;

    /// <summary>Serialises the state and marks the checkpoint taken at <paramref name="now"/>.</summary>
    public byte[] Take(long now)
    {
        var snapshot = Build();
        wanted = false;
        blocks.CheckpointTaken();
        lastTicks = now;
        return snapshot;
    }

    /// <summary>
    /// Recovery ended: a checkpoint is wanted only when the state was rebuilt from the blocks (one loaded stays valid
    /// though replaying its tail may have removed blocks).
    /// </summary>
    public void Recovered(bool wanted)
    {
        this.wanted = wanted;
        blocks.CheckpointTaken();
    }

    /// <summary>Writes a snapshot atomically (temporary file, fsync, rename). Caller holds the I/O lock, not the state lock.</summary>
    public void Write(byte[] snapshot) => AtomicFile.Write(fs, path, snapshot);

    /// <summary>
    /// Restores the state from the checkpoint when it is present, authentic and consistent with the block files
    /// (<paramref name="blockIds"/>, sorted). False (and nothing restored) to rebuild from the blocks instead.
    /// </summary>
    public bool TryLoad(IReadOnlyList<uint> blockIds)
    {
        var data = AtomicFile.Read(fs, path);
        if (data is not null && key is not null)
        {
            data = key.OpenFile(data, "index"u8);
        }

        if (data is null)
        {
            return false;
        }

        try
        {
            return TryRestore(data, blockIds);
        }
        catch (InvalidDataException)
        {
            return false;
        }
    }

    private byte[] Build()
    {
        var builder = new BinaryBuilder(4096 + (subjects.Count * 48) + (blocks.Count * 96));
        builder.U32(Magic);
        builder.U64(ledger.First);
        builder.U64(ledger.Last);
        builder.I64(ledger.FirstTimestamp);
        builder.I64(ledger.LastTimestamp);
        builder.U64(ledger.Messages);
        builder.U64(ledger.Bytes);
        builder.U64(ledger.Lost);
        // The prepared next block has taken an id but has no file yet: a recovery must still replay a file of that id.
        builder.U32(blocks.NextIdForCheckpoint);
        builder.I32(blocks.Count);
        foreach (var block in blocks)
        {
            builder.U32(block.Id);
            builder.U8(block.Flags);
            builder.Raw(block.Salt);
            builder.U64(block.First);
            builder.U64(block.Last);
            builder.I64(block.FirstTimestamp);
            builder.I64(block.LastTimestamp);
            builder.U64(block.Messages);
            builder.U64(block.Bytes);
            builder.I64(block.End);
            builder.I32(block.Markers);
            var bits = block.NotLiveBits;
            builder.I32(bits?.Length ?? -1);
            if (bits is not null)
            {
                foreach (var word in bits)
                {
                    builder.U64(word);
                }
            }
        }

        builder.I32(subjects.Count);
        foreach (var index in subjects.Indexes())
        {
            ref var entry = ref subjects[index];
            builder.Bytes(entry.Subject);
            builder.U64(entry.Count);
            builder.U64(entry.First);
            builder.U64(entry.Last);
            builder.U8(entry.FirstStale ? (byte)1 : (byte)0);
        }

        // Appended after the subjects (a checkpoint without it has no times to live): the live messages' expiries.
        if (ledger.Ttls is { } ttls)
        {
            var live = ttls.Entries().Where(entry => blocks.Find(entry.Sequence)?.IsLive(entry.Sequence) == true).ToList();
            builder.I32(live.Count);
            foreach (var (sequence, expires) in live)
            {
                builder.U64(sequence);
                builder.I64(expires);
            }
        }

        var plain = builder.Written;
        return key is null ? plain.ToArray() : key.SealFile(plain, "index"u8);
    }

    private bool TryRestore(byte[] data, IReadOnlyList<uint> blockIds)
    {
        var parser = new BinaryParser(data);
        if (parser.U32() != Magic)
        {
            return false;
        }

        var savedFirst = parser.U64();
        var savedLast = parser.U64();
        var savedFirstTimestamp = parser.I64();
        var savedLastTimestamp = parser.I64();
        var savedMessages = parser.U64();
        var savedBytes = parser.U64();
        var savedLost = parser.U64();
        var savedNextId = parser.U32();
        var count = parser.I32();
        var restored = new List<MessageBlock>(count);
        for (var i = 0; i < count; i++)
        {
            var id = parser.U32();
            var flags = parser.U8();
            var salt = parser.Raw(16).ToArray();
            var block = blocks.Existing(id, flags, salt);
            block.Created = true;
            block.First = parser.U64();
            block.Last = parser.U64();
            block.FirstTimestamp = parser.I64();
            block.LastTimestamp = parser.I64();
            block.Messages = parser.U64();
            block.Bytes = parser.U64();
            block.End = parser.I64();
            block.Markers = parser.I32();
            block.Sealed = true;
            var words = parser.I32();
            if (words >= 0)
            {
                var bits = new ulong[words];
                for (var w = 0; w < words; w++)
                {
                    bits[w] = parser.U64();
                }

                block.SetNotLiveBits(bits);
            }

            block.Flushed = block.Synced = block.End;
            restored.Add(block);
        }

        var subjectCount = parser.I32();
        var restoredSubjects = new List<(byte[] Subject, ulong Count, ulong First, ulong Last, bool Stale)>(subjectCount);
        for (var i = 0; i < subjectCount; i++)
        {
            restoredSubjects.Add((parser.Bytes(), parser.U64(), parser.U64(), parser.U64(), parser.U8() != 0));
        }

        var ttlCount = parser.AtEnd ? 0 : parser.I32();
        var restoredTtls = new List<(ulong Sequence, long Expires)>(ttlCount);
        for (var i = 0; i < ttlCount; i++)
        {
            restoredTtls.Add((parser.U64(), parser.I64()));
        }

        // Every block it lists must exist, and the last one must still hold the bytes it describes.
        foreach (var block in restored)
        {
            if (!blockIds.Contains(block.Id))
            {
                DisposeCiphers(restored);
                return false;
            }
        }

        if (restored.Count > 0)
        {
            var lastBlock = restored[^1];
            using var file = fs.Open(lastBlock.Path, create: false);
            if (!lastBlock.Compressed && file.Length < BlockFileHeader.Size + lastBlock.End)
            {
                DisposeCiphers(restored);
                return false;
            }
        }

        foreach (var block in restored)
        {
            blocks.Add(block);
        }

        ledger.Restore(savedFirst, savedLast, savedFirstTimestamp, savedLastTimestamp, savedMessages, savedBytes, savedLost);
        blocks.NextBlockId = savedNextId;
        foreach (var (subject, subjectMessages, subjectFirst, subjectLast, stale) in restoredSubjects)
        {
            subjects.Restore(subject, subjectMessages, subjectFirst, subjectLast, stale);
        }

        foreach (var (sequence, expires) in restoredTtls)
        {
            ledger.ReplayTtl(sequence, expires);
        }

        return true;
    }

    private static void DisposeCiphers(List<MessageBlock> restored)
    {
        foreach (var block in restored)
        {
            block.Cipher?.Dispose();
        }
    }
}
