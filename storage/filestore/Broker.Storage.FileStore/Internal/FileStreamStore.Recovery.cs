using System.Buffers;
using System.Diagnostics;
using System.Globalization;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Opening a stream kept from an earlier run: load the checkpoint (or start empty when it is missing, stale or
/// corrupt), replay every record after it in block order (messages, tombstones, head and truncate markers), verifying
/// each record's checksum; cut a torn or garbage tail off the last block; move the last sequence up to the durable
/// reservation so no sequence is reused; then write a new reservation before accepting appends.
/// </summary>
internal sealed partial class FileStreamStore
{
    /// <summary>Opens the stream in <paramref name="directory"/>; <see langword="null"/> when it holds no stream of ours.</summary>
    public static FileStreamStore? Open(IStorageFileSystem fs, FileStoreOptions options, ILogger logger, string directory)
    {
        var meta = StreamMetaFile.Read(fs, directory, options);
        if (meta is null)
        {
            return null;
        }

        var (config, salt, key) = meta.Value;
        var store = new FileStreamStore(fs, options, logger, config, key, salt);
        var watch = Stopwatch.StartNew();
        store.Recover();
        FileStoreLog.Recovered(logger, config.Name, store.messages, store.first, store.last, store.lost, watch.Elapsed.TotalMilliseconds);
        store.RecoverConsumers();
        store.StartBackground();
        return store;
    }

    private void Recover()
    {
        if (!fs.DirectoryExists(blocksDirectory))
        {
            CreateDirectoryDurably(fs, blocksDirectory);
        }

        var ids = new List<uint>();
        foreach (var name in fs.ListFiles(blocksDirectory))
        {
            if (name.EndsWith(".tmp", StringComparison.Ordinal))
            {
                // A compaction, compression or atomic write that did not finish: the original is intact.
                fs.DeleteFile(Path.Combine(blocksDirectory, name));
            }
            else if (name.EndsWith(".blk", StringComparison.Ordinal) && uint.TryParse(name.AsSpan(0, name.Length - 4), NumberStyles.None, CultureInfo.InvariantCulture, out var id))
            {
                ids.Add(id);
            }
        }

        ids.Sort();
        var savedReservation = ReadReservation();
        var fromCheckpoint = TryLoadCheckpoint(ids);
        uint replayFrom;
        if (fromCheckpoint)
        {
            replayFrom = nextBlockId;
            foreach (var id in ids)
            {
                // Files of blocks removed before the checkpoint whose deletion did not complete.
                if (id < nextBlockId && blocks.TrueForAll(b => b.Id != id))
                {
                    fs.DeleteFile(BlockPath(id));
                }
            }

            if (blocks.Count > 0)
            {
                var lastBlock = blocks[^1];
                ReplayBlockFile(lastBlock, lastBlock.End, isLast: ids.Count == 0 || ids[^1] == lastBlock.Id);
            }
        }
        else
        {
            replayFrom = 0;
            if (fs.FileExists(CheckpointPath))
            {
                FileStoreLog.CheckpointRejected(logger, config.Name);
            }
        }

        foreach (var id in ids)
        {
            if (id < replayFrom)
            {
                continue;
            }

            var isLast = id == ids[^1];
            var block = OpenBlockForReplay(id, isLast);
            if (block is null)
            {
                continue;
            }

            if (blocks.Count > 0)
            {
                blocks[^1].ReleaseCache();
                blocks[^1].CloseFile();
            }

            blocks.Add(block);
            ReplayBlockFile(block, 0, isLast);
            nextBlockId = Math.Max(nextBlockId, id + 1);
        }

        // Releasing caches of everything but the tail keeps recovery memory bounded.
        tail = blocks.Count > 0 ? blocks[^1] : null;
        foreach (var block in blocks)
        {
            if (block != tail)
            {
                block.Sealed = true;
                block.ReleaseCache();
                block.CloseFile();
            }
        }

        if (tail is not null && (tail.Compressed || tail.Cache is null))
        {
            tail.Sealed = true;
            tail.ReleaseCache();
            tail = null;
        }

        if (savedReservation > last)
        {
            // A crash: sequences up to the reservation may have been handed out; skip them rather than reuse them.
            FileStoreLog.SequencesSkipped(logger, config.Name, last + 1, savedReservation);
            last = savedReservation;
            lastTimestamp = Math.Max(lastTimestamp, NowNanoseconds(0));
        }

        if (messages == 0)
        {
            first = last + 1;
            firstTimestamp = 0;
        }

        durable = last;
        reserved = Math.Max(savedReservation, last);
        WriteReservation(last + ReservationStep);
        checkpointWanted = !fromCheckpoint;
    }

    /// <summary>Reads a block file for a full replay; <see langword="null"/> (and the file handled) when it has no valid header.</summary>
    private MessageBlock? OpenBlockForReplay(uint id, bool isLast)
    {
        var path = BlockPath(id);
        var file = fs.Open(path, create: false);
        Span<byte> header = stackalloc byte[BlockFileHeader.Size];
        if (file.Read(header, 0) < BlockFileHeader.Size || !BlockFileHeader.TryRead(header, out var flags, out var salt))
        {
            file.Dispose();
            if (isLast)
            {
                // Created just before a crash, nothing in it was ever synced.
                fs.DeleteFile(path);
                fs.SyncDirectory(blocksDirectory);
            }
            else
            {
                FileStoreLog.BlockUnreadable(logger, config.Name, id);
            }

            return null;
        }

        if ((flags & BlockFileHeader.Encrypted) != 0 && key is null)
        {
            file.Dispose();
            throw new InvalidOperationException($"stream {config.Name}: block {id} is encrypted but the stream has no key");
        }

        return new MessageBlock(buffers, id, path, flags, salt, key?.ForBlock(salt))
        {
            Created = true,
            File = file,
            First = last + 1,
            Last = last,
        };
    }

    /// <summary>
    /// Replays the records of a block from <paramref name="start"/> (0 for all, the checkpoint's position for its tail).
    /// The last block's file is cut at the end of its last accepted record (a torn write, garbage, or stale data).
    /// </summary>
    private void ReplayBlockFile(MessageBlock block, long start, bool isLast)
    {
        block.File ??= fs.Open(block.Path, create: false);
        byte[] records;
        long length;
        try
        {
            records = BlockReader.ReadRecords(block.File, block, buffers, out length);
        }
        catch (InvalidDataException)
        {
            FileStoreLog.BlockUnreadable(logger, config.Name, block.Id);
            return;
        }

        block.Cache = records;
        var span = records.AsSpan(0, (int)Math.Max(0, length));
        if (start > 0)
        {
            // Offsets of the records the checkpoint already counted.
            IndexRecords(block, span[..(int)Math.Min(start, span.Length)], fromLoad: false);
        }

        var scanStart = (int)Math.Min(start, span.Length);
        var acceptedEnd = scanStart;
        var scanner = new RecordScanner(span[scanStart..]);
        while (scanner.Next(out var header, out var relative))
        {
            var offset = scanStart + relative;
            if (ReplayRecord(block, span.Slice(offset, header.Length), header, offset))
            {
                acceptedEnd = offset + header.Length;
            }
        }

        if (scanner.SkippedBytes > 0)
        {
            FileStoreLog.CorruptRecordsSkipped(logger, config.Name, block.Id, scanner.SkippedBytes);
        }

        block.End = Math.Max(acceptedEnd, start);
        block.Flushed = block.Synced = block.End;
        if (isLast && !block.Compressed && block.File.Length > BlockFileHeader.Size + block.End)
        {
            // Whatever follows the last good record was never acknowledged: cut it so it can never resurface.
            FileStoreLog.TailTruncated(logger, config.Name, block.Id, block.File.Length - BlockFileHeader.Size - block.End);
            block.File.SetLength(BlockFileHeader.Size + block.End);
            block.File.Sync();
        }

        block.Allocated = block.File.Length;
        if (isLast && !block.Compressed && records.Length < Math.Min(blockSize, 64 << 10))
        {
            var grown = buffers.RentCache((int)Math.Min(blockSize, 64 << 10));
            records.AsSpan(0, (int)block.End).CopyTo(grown);
            buffers.ReturnCache(records);
            block.Cache = grown;
        }
    }

    /// <summary>Applies one record during recovery; false when it is stale (already superseded) and ignored.</summary>
    private bool ReplayRecord(MessageBlock block, ReadOnlySpan<byte> record, RecordHeader header, int offset)
    {
        switch (header.Kind)
        {
            case RecordKind.Message:
            {
                if (header.Sequence <= last)
                {
                    return false;
                }

                block.End = offset;
                var accounted = RecordFormat.AccountedSize(header.SubjectLength, header.HeadersLength, header.PayloadLength(block.Encrypted));
                AppendedMessage(block, header.Sequence, header.Timestamp, header.Length, accounted);
                var subject = SubjectAt(block, (uint)offset, out _);
                if (block.Encrypted && subject.IsEmpty && header.SubjectLength > 0)
                {
                    // Fails authentication: lost, never served.
                    LoseMessage(block, header.Sequence);
                    return true;
                }

                AddToSubject(subject, header.Sequence);
                return true;
            }

            case RecordKind.Erased:
            {
                if (header.Sequence <= last)
                {
                    return false;
                }

                if (!block.HasMessages)
                {
                    block.First = header.Sequence;
                    block.FirstTimestamp = header.Timestamp;
                }

                for (var gap = block.Last + 1; gap <= header.Sequence; gap++)
                {
                    block.SetOffset(gap, MessageBlock.NoOffset);
                    block.MarkNotLive(gap);
                }

                block.Last = header.Sequence;
                block.LastTimestamp = header.Timestamp;
                last = header.Sequence;
                lastTimestamp = Math.Max(lastTimestamp, header.Timestamp);
                if (messages == 0)
                {
                    first = last + 1;
                }

                return true;
            }

            case RecordKind.Tombstone:
                RemoveLive(header.Sequence, RemovalReason.Replay);
                return true;

            case RecordKind.Head:
                while (messages > 0 && first < header.Sequence)
                {
                    if (!RemoveLive(first, RemovalReason.Replay))
                    {
                        break;
                    }
                }

                if (header.Sequence > last + 1)
                {
                    last = header.Sequence - 1;
                }

                if (messages == 0)
                {
                    first = last + 1;
                }

                return true;

            case RecordKind.Truncate:
                if (header.Sequence < last)
                {
                    TruncateState(header.Sequence);
                }

                return true;

            default:
                _ = record;
                return false;
        }
    }

    private void RecoverConsumers()
    {
        var root = Path.Combine(directory, ConsumersFolder);
        foreach (var name in fs.ListDirectories(root))
        {
            var consumer = FileConsumerStore.Open(this, fs, Path.Combine(root, name), key, options, logger);
            if (consumer is not null)
            {
                consumers.Add(consumer);
            }
        }
    }
}
