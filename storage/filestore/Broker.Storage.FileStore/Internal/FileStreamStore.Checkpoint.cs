using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// <c>msgs/index.db</c>: a checkpoint of the stream state (counters, each block's range, counters and not-live bitmap,
/// the per-subject index) as of a position in the tail block. It is written only after the data it describes is
/// fsynced, so it never claims more than the disk holds; a restart loads it and replays only the records after that
/// position, so recovery time follows the tail, not the stream. Encrypted with the stream key when encryption is on.
/// </summary>
internal sealed partial class FileStreamStore
{
    private const uint CheckpointMagic = 0x3149534A; // "JSI1"

    private string CheckpointPath => Path.Combine(blocksDirectory, "index.db");

    /// <summary>Serialises the state. Caller holds <c>sync</c>.</summary>
    private byte[] BuildCheckpoint()
    {
        var builder = new BinaryBuilder(4096 + (subjects.Count * 48) + (blocks.Count * 96));
        builder.U32(CheckpointMagic);
        builder.U64(first);
        builder.U64(last);
        builder.I64(firstTimestamp);
        builder.I64(lastTimestamp);
        builder.U64(messages);
        builder.U64(bytes);
        builder.U64(lost);
        // The prepared next block has taken an id but has no file yet: a recovery must still replay a file of that id.
        builder.U32(spare?.Id ?? nextBlockId);
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

        var plain = builder.Written;
        return key is null ? plain.ToArray() : key.SealFile(plain, "index"u8);
    }

    /// <summary>
    /// Restores the state from the checkpoint when it is present, authentic and consistent with the block files.
    /// Returns the blocks (without caches) or <see langword="null"/> to rebuild from the blocks instead.
    /// </summary>
    private bool TryLoadCheckpoint(IReadOnlyList<uint> blockIds)
    {
        var data = AtomicFile.Read(fs, CheckpointPath);
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
            var parser = new BinaryParser(data);
            if (parser.U32() != CheckpointMagic)
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
                var block = new MessageBlock(buffers, id, BlockPath(id), flags, salt, key?.ForBlock(salt))
                {
                    Created = true,
                    First = parser.U64(),
                    Last = parser.U64(),
                    FirstTimestamp = parser.I64(),
                    LastTimestamp = parser.I64(),
                    Messages = parser.U64(),
                    Bytes = parser.U64(),
                    End = parser.I64(),
                    Markers = parser.I32(),
                    Sealed = true,
                };
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

            blocks.AddRange(restored);
            first = savedFirst;
            last = savedLast;
            firstTimestamp = savedFirstTimestamp;
            lastTimestamp = savedLastTimestamp;
            messages = savedMessages;
            bytes = savedBytes;
            lost = savedLost;
            nextBlockId = savedNextId;
            foreach (var (subject, subjectMessages, subjectFirst, subjectLast, stale) in restoredSubjects)
            {
                var index = subjects.GetOrAdd(subject);
                ref var entry = ref subjects[index];
                entry.Count = subjectMessages;
                entry.First = subjectFirst;
                entry.Last = subjectLast;
                entry.FirstStale = stale;
            }

            return true;
        }
        catch (InvalidDataException)
        {
            return false;
        }
    }

    private static void DisposeCiphers(List<MessageBlock> restored)
    {
        foreach (var block in restored)
        {
            block.Cipher?.Dispose();
        }
    }
}
