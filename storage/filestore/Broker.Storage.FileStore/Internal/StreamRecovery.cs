using System.Globalization;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Opening a stream kept from an earlier run: load the checkpoint (or start empty when it is missing, stale or
/// corrupt), replay every record after it in block order (messages, tombstones, head and truncate markers, times to live), verifying
/// each record's checksum; cut a torn or garbage tail off the last block; move the last sequence up to the durable
/// reservation so no sequence is reused; then write a new reservation before accepting appends. Runs once, on the
/// opening thread, before the committer starts.
/// </summary>
internal sealed class StreamRecovery(
    IStorageFileSystem fs,
    string blocksDirectory,
    StreamKey? key,
    BlockSet blocks,
    StreamLedger ledger,
    SubjectCounters subjects,
    StreamCheckpoint checkpoints,
    SequenceReservation reservation,
    StreamCommitter committer,
    ILogger logger,
    string name)
{
    public void Run()
    {
        if (!fs.DirectoryExists(blocksDirectory))
        {
            DurableDirectory.Create(fs, blocksDirectory);
        }

        var ids = new List<uint>();
        foreach (var file in fs.ListFiles(blocksDirectory))
        {
            if (file.EndsWith(".tmp", StringComparison.Ordinal))
            {
                // A compaction, compression or atomic write that did not finish: the original is intact.
                fs.DeleteFile(Path.Combine(blocksDirectory, file));
            }
            else if (file.EndsWith(".blk", StringComparison.Ordinal) && uint.TryParse(file.AsSpan(0, file.Length - 4), NumberStyles.None, CultureInfo.InvariantCulture, out var id))
            {
                ids.Add(id);
            }
        }

        ids.Sort();
        var savedReservation = reservation.Read();
        var fromCheckpoint = checkpoints.TryLoad(ids);
        var tailOnDisk = false;
        uint replayFrom;
        if (fromCheckpoint)
        {
            replayFrom = blocks.NextBlockId;
            foreach (var id in ids)
            {
                // Files of blocks removed before the checkpoint whose deletion did not complete.
                if (id < blocks.NextBlockId && !Listed(id))
                {
                    fs.DeleteFile(blocks.PathOf(id));
                }
            }

            if (blocks.Count > 0)
            {
                var lastBlock = blocks[blocks.Count - 1];
                var isLast = ids.Count == 0 || ids[^1] == lastBlock.Id;
                tailOnDisk = isLast && EndsAtCheckpoint(lastBlock);
                if (!tailOnDisk)
                {
                    ReplayBlockFile(lastBlock, lastBlock.End, isLast);
                }
            }
        }
        else
        {
            replayFrom = 0;
            if (checkpoints.Exists)
            {
                FileStoreLog.CheckpointRejected(logger, name);
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
                blocks[blocks.Count - 1].ReleaseCache();
                blocks[blocks.Count - 1].CloseFile();
            }

            blocks.Add(block);
            ReplayBlockFile(block, 0, isLast);
            blocks.NextBlockId = Math.Max(blocks.NextBlockId, id + 1);
        }

        blocks.FinishRecovery(tailOnDisk);
        if (savedReservation > ledger.Last)
        {
            // A crash: sequences up to the reservation may have been handed out; skip them rather than reuse them.
            FileStoreLog.SequencesSkipped(logger, name, ledger.Last + 1, savedReservation);
        }

        ledger.Recovered(savedReservation);
        committer.Recovered(ledger.Last);
        reservation.Reserved = Math.Max(savedReservation, ledger.Last);
        committer.Reserve(ledger.Last + SequenceReservation.Step);
        checkpoints.Recovered(wanted: !fromCheckpoint);
    }

    /// <summary>
    /// Whether the checkpoint's last block ends exactly where the checkpoint says (a clean stop cuts the preallocated
    /// zeros, <see cref="BlockSet.TrimTailFile"/>): nothing follows to replay or cut, so its records need not be read
    /// now; the first read or append reads them (<see cref="BlockSet.EnsureLoaded"/>), as for any sealed block. A
    /// restart's STREAM.INFO then waits for no block read (docs/benchmarks.md, "start8"). Compressed and encrypted
    /// blocks, and any file of another length (a crash's torn or preallocated tail), are replayed as before.
    /// </summary>
    private bool EndsAtCheckpoint(MessageBlock block)
    {
        if (block.Compressed || block.Encrypted)
        {
            return false;
        }

        block.File ??= fs.Open(block.Path, create: false);
        if (block.File.Length != BlockFileHeader.Size + block.End)
        {
            return false;
        }

        block.Allocated = block.File.Length;
        return true;
    }

    private bool Listed(uint id)
    {
        foreach (var block in blocks)
        {
            if (block.Id == id)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Reads a block file for a full replay; <see langword="null"/> (and the file handled) when it has no valid header.</summary>
    private MessageBlock? OpenBlockForReplay(uint id, bool isLast)
    {
        var path = blocks.PathOf(id);
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
                FileStoreLog.BlockUnreadable(logger, name, id);
            }

            return null;
        }

        if ((flags & BlockFileHeader.Encrypted) != 0 && key is null)
        {
            file.Dispose();
            throw new InvalidOperationException($"stream {name}: block {id} is encrypted but the stream has no key");
        }

        var block = blocks.Existing(id, flags, salt);
        block.Created = true;
        block.File = file;
        block.First = ledger.Last + 1;
        block.Last = ledger.Last;
        return block;
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
            records = BlockReader.ReadRecords(block.File, block, blocks.Buffers, out length);
        }
        catch (InvalidDataException)
        {
            FileStoreLog.BlockUnreadable(logger, name, block.Id);
            return;
        }

        block.Cache = records;
        var span = records.AsSpan(0, (int)Math.Max(0, length));
        if (start > 0)
        {
            // Offsets of the records the checkpoint already counted.
            blocks.IndexRecords(block, span[..(int)Math.Min(start, span.Length)], fromLoad: false);
        }

        var scanStart = (int)Math.Min(start, span.Length);
        var acceptedEnd = scanStart;
        var scanner = new RecordScanner(span[scanStart..]);
        while (scanner.Next(out var header, out var relative))
        {
            var offset = scanStart + relative;
            if (ReplayRecord(block, header, offset))
            {
                acceptedEnd = offset + header.Length;
            }
        }

        if (scanner.SkippedBytes > 0)
        {
            FileStoreLog.CorruptRecordsSkipped(logger, name, block.Id, scanner.SkippedBytes);
        }

        block.End = Math.Max(acceptedEnd, start);
        block.Flushed = block.Synced = block.End;
        if (isLast && !block.Compressed && block.File.Length > BlockFileHeader.Size + block.End)
        {
            // Whatever follows the last good record was never acknowledged: cut it so it can never resurface.
            FileStoreLog.TailTruncated(logger, name, block.Id, block.File.Length - BlockFileHeader.Size - block.End);
            block.File.SetLength(BlockFileHeader.Size + block.End);
            block.File.Sync();
        }

        block.Allocated = block.File.Length;
        var tailCapacity = (int)Math.Min(blocks.BlockSize, 64 << 10);
        if (isLast && !block.Compressed && records.Length < tailCapacity)
        {
            var grown = blocks.Buffers.RentCache(tailCapacity);
            records.AsSpan(0, (int)block.End).CopyTo(grown);
            blocks.Buffers.ReturnCache(records);
            block.Cache = grown;
        }
    }

    /// <summary>Applies one record during recovery; false when it is stale (already superseded) and ignored.</summary>
    private bool ReplayRecord(MessageBlock block, in RecordHeader header, int offset)
    {
        switch (header.Kind)
        {
            case RecordKind.Message:
            {
                if (header.Sequence <= ledger.Last)
                {
                    return false;
                }

                block.End = offset;
                var accounted = RecordFormat.AccountedSize(header.SubjectLength, header.HeadersLength, header.PayloadLength(block.Encrypted));
                ledger.Appended(block, header.Sequence, header.Timestamp, header.Length, accounted);
                var subject = blocks.SubjectAt(block, (uint)offset, out _);
                if (block.Encrypted && subject.IsEmpty && header.SubjectLength > 0)
                {
                    // Fails authentication: lost, never served.
                    ledger.LoseMessage(block, header.Sequence);
                    return true;
                }

                subjects.Add(subject, header.Sequence);
                return true;
            }

            case RecordKind.Erased:
                if (header.Sequence <= ledger.Last)
                {
                    return false;
                }

                ledger.ReplayErased(block, header);
                return true;

            case RecordKind.Tombstone:
                ledger.RemoveLive(header.Sequence, RemovalReason.Replay);
                return true;

            case RecordKind.Head:
                ledger.ReplayHead(header.Sequence);
                return true;

            case RecordKind.Ttl:
                // The timestamp field holds when the message expires.
                ledger.ReplayTtl(header.Sequence, header.Timestamp);
                return true;

            case RecordKind.Truncate:
                if (header.Sequence < ledger.Last)
                {
                    ledger.TruncateState(header.Sequence);
                }

                return true;

            default:
                return false;
        }
    }
}
