using System.Globalization;
using System.Security.Cryptography;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The file store of one stream. Layout under the stream's directory (nats-server's, see <c>docs/durability.md</c>):
/// <c>meta.inf</c>, <c>msgs/&lt;id&gt;.blk</c> message blocks, <c>msgs/index.db</c> the checkpoint of the stream state,
/// <c>msgs/seq.db</c> the sequence reservation, <c>obs/&lt;consumer&gt;/</c> consumer state.
/// </summary>
/// <remarks>
/// Locks: <c>ioSync</c> (outer) serialises file writes other than appends into the tail cache: the committer's
/// write and sync round, erase, compaction, purge, truncate; <c>sync</c> (inner) guards all in-memory state. Appends
/// (<see cref="Store"/>) take only <c>sync</c>, so a publish never waits for a disk write.
/// </remarks>
internal sealed partial class FileStreamStore : IStreamStore
{
    internal const string BlocksFolder = "msgs";
    internal const string ConsumersFolder = "obs";

    /// <summary>
    /// Sealed blocks that keep their records in memory at most (the tail always does), restored at the end of each
    /// commit round and maintenance tick: with 8 MiB blocks a stream then holds at most 5 block caches plus
    /// <see cref="BlockBuffers.MaxFreeCaches"/> free ones, 56 MiB. Cache expiry drops idle ones sooner.
    /// </summary>
    internal const int MaxCachedSealedBlocks = 4;

    private readonly object sync = new();
    private readonly object ioSync = new();
    private readonly IStorageFileSystem fs;
    private readonly FileStoreOptions options;
    private readonly ILogger logger;
    private readonly string directory;
    private readonly string blocksDirectory;
    private readonly StreamKey? key;
    private readonly byte[]? keySalt;
    private readonly List<MessageBlock> blocks = [];
    private readonly SubjectIndex subjects = new();
    private readonly List<FileConsumerStore> consumers = [];
    private readonly long blockSize;
    private readonly BlockBuffers buffers;

    private StreamStoreConfig config;
    private MessageBlock? tail;
    private uint nextBlockId = 1;
    private ulong first = 1;
    private ulong last;
    private long firstTimestamp;
    private long lastTimestamp;
    private ulong messages;
    private ulong bytes;
    private ulong lost;
    private StorageUpdateHandler? updates;
    private bool closed;
    private Exception? failure;
    private byte[] scratch = new byte[256];
    private MessageBlock? spare;
    private bool trimWanted;
    private long useClock;

    private FileStreamStore(IStorageFileSystem fs, FileStoreOptions options, ILogger logger, StreamStoreConfig config, StreamKey? key, byte[]? keySalt)
    {
        this.fs = fs;
        this.options = options;
        this.logger = logger;
        this.config = config;
        this.key = key;
        this.keySalt = keySalt;
        directory = config.Directory ?? throw new InvalidOperationException("the file store needs a store directory (store_dir)");
        blocksDirectory = Path.Combine(directory, BlocksFolder);
        blockSize = ChooseBlockSize(options, config, key is not null);
        buffers = new BlockBuffers(blockSize);
    }

    public StreamStoreConfig Config
    {
        get
        {
            lock (sync)
            {
                return config;
            }
        }
    }

    /// <summary>Messages found corrupt or missing on disk since the store opened (nats-server's <c>lost</c>).</summary>
    public ulong LostMessages
    {
        get
        {
            lock (sync)
            {
                return lost;
            }
        }
    }

    internal string Directory => directory;

    internal int BlockCount
    {
        get
        {
            lock (sync)
            {
                return blocks.Count;
            }
        }
    }

    /// <summary>Sealed blocks whose records are in memory (bounded by <see cref="MaxCachedSealedBlocks"/> once durable).</summary>
    internal int CachedSealedBlocks
    {
        get
        {
            lock (sync)
            {
                return blocks.Count(b => b != tail && b.Cache is not null);
            }
        }
    }

    /// <summary>Full-size caches in the store's free list.</summary>
    internal int FreeCaches
    {
        get
        {
            lock (sync)
            {
                return buffers.FreeCaches;
            }
        }
    }

    /// <summary>Creates the store of a new stream: the directories and <c>meta.inf</c>, all durable before it returns.</summary>
    public static FileStreamStore Create(IStorageFileSystem fs, FileStoreOptions options, ILogger logger, StreamStoreConfig config)
    {
        var directory = config.Directory ?? throw new InvalidOperationException("the file store needs a store directory (store_dir)");
        if (fs.FileExists(Path.Combine(directory, StreamMetaFile.FileName)))
        {
            throw new InvalidOperationException($"stream directory {directory} already holds a stream");
        }

        byte[]? salt = null;
        StreamKey? key = null;
        if (options.Cipher != FileStoreCipher.None)
        {
            salt = RandomNumberGenerator.GetBytes(16);
            key = StreamKey.Derive(options.Cipher, options.Key!, salt);
        }

        CreateDirectoryDurably(fs, Path.Combine(directory, BlocksFolder));
        CreateDirectoryDurably(fs, Path.Combine(directory, ConsumersFolder));
        StreamMetaFile.Write(fs, directory, config, salt, key);
        var store = new FileStreamStore(fs, options, logger, config, key, salt);
        store.reserved = 0;
        store.WriteReservation(ReservationStep);
        store.StartBackground();
        return store;
    }

    /// <summary>Creates a directory and makes its entry (and each new parent's) durable.</summary>
    internal static void CreateDirectoryDurably(IStorageFileSystem fs, string path)
    {
        var missing = new Stack<string>();
        for (var current = path; !string.IsNullOrEmpty(current) && !fs.DirectoryExists(current); current = Path.GetDirectoryName(current))
        {
            missing.Push(current);
        }

        fs.CreateDirectory(path);
        while (missing.Count > 0)
        {
            var created = missing.Pop();
            var parent = Path.GetDirectoryName(created);
            if (!string.IsNullOrEmpty(parent))
            {
                fs.SyncDirectory(parent);
            }
        }
    }

    private static long ChooseBlockSize(FileStoreOptions options, StreamStoreConfig config, bool encrypted)
    {
        long size;
        if (options.BlockSize > 0)
        {
            size = options.BlockSize;
        }
        else
        {
            // nats-server's defaults (filestore.go): 8 MiB for limits streams, 4 MiB for interest, work-queue and
            // per-subject-limited (KV) streams, sized down for a small max_bytes, at most 2 MiB when encrypted.
            size = config.Retention == RetentionPolicy.Limits && config.MaxMessagesPerSubject <= 0 ? 8L << 20 : 4L << 20;
            if (config.MaxBytes > 0)
            {
                var quarter = config.MaxBytes / 4;
                size = quarter <= 32 << 10 ? 32 << 10 : quarter >= 8L << 20 ? 8L << 20 : Math.Min(size, 4L << 20);
            }

            if (encrypted)
            {
                size = Math.Min(size, 2L << 20);
            }
        }

        return size;
    }

    private string BlockPath(uint id) => Path.Combine(blocksDirectory, id.ToString(CultureInfo.InvariantCulture) + ".blk");

    private void ThrowIfUnusable()
    {
        if (closed)
        {
            throw new ObjectDisposedException(nameof(FileStreamStore), "store is closed");
        }
    }

    /// <summary>The index of the block whose range holds <paramref name="sequence"/>, or -1.</summary>
    private int FindBlockIndex(ulong sequence)
    {
        int lo = 0, hi = blocks.Count - 1, found = -1;
        while (lo <= hi)
        {
            var mid = (lo + hi) >>> 1;
            if (blocks[mid].Last >= sequence)
            {
                found = mid;
                hi = mid - 1;
            }
            else
            {
                lo = mid + 1;
            }
        }

        if (found < 0)
        {
            return -1;
        }

        // Blocks without messages have an empty range ending where the previous one ends; skip to one holding it.
        while (found < blocks.Count && !blocks[found].InRange(sequence))
        {
            if (blocks[found].HasMessages && blocks[found].First > sequence)
            {
                return -1;
            }

            found++;
        }

        return found < blocks.Count ? found : -1;
    }

    private MessageBlock? FindBlock(ulong sequence)
    {
        var index = FindBlockIndex(sequence);
        return index < 0 ? null : blocks[index];
    }

    /// <summary>
    /// Makes the next block the tail. Caller holds <c>sync</c>. It allocates nothing when the committer has prepared the
    /// block object (<see cref="PrepareSpareBlock"/>) and a sealed block has given back a full-size cache: the file is
    /// created by the committer with the block's first write, so no system call happens here either.
    /// </summary>
    private MessageBlock NewTailBlock(int minimumCapacity)
    {
        if (tail is not null)
        {
            tail.Sealed = true;
            tail.LastUse = ++useClock;

            // A sealed block is a natural checkpoint (taken at most once a second): replay stays within a block or so.
            checkpointWanted = true;
        }

        var block = spare ?? NewBlockObject();
        spare = null;
        block.First = last + 1;
        block.Last = last;
        block.Cache = buffers.RentCache(Math.Max(minimumCapacity, buffers.HasFullCache ? (int)blockSize : (int)Math.Min(blockSize, 64 << 10)));
        block.Offsets = buffers.TakeOffsets();
        block.LastAccess = Environment.TickCount64;
        block.LastUse = ++useClock;
        blocks.Add(block);
        tail = block;
        newFiles = true;
        trimWanted = true;
        return block;
    }

    /// <summary>A block object with the next id, its salt and cipher, and no file yet. Caller holds <c>sync</c>.</summary>
    private MessageBlock NewBlockObject()
    {
        var id = nextBlockId++;
        var salt = RandomNumberGenerator.GetBytes(16);
        var flags = key is null ? (byte)0 : BlockFileHeader.Encrypted;
        return new MessageBlock(buffers, id, BlockPath(id), flags, salt, key?.ForBlock(salt));
    }

    /// <summary>
    /// Prepares the next tail's block object on the committer's thread, so a block roll on a publisher's thread
    /// allocates nothing. Its id is taken: a checkpoint records it as the next id. Caller holds <c>sync</c>.
    /// </summary>
    private void PrepareSpareBlock()
    {
        if (spare is null && tail is not null && !closed)
        {
            spare = NewBlockObject();
        }
    }

    /// <summary>
    /// Keeps at most <see cref="MaxCachedSealedBlocks"/> sealed blocks' caches, dropping the least recently used whose
    /// bytes are all durable (their arrays go to the free list, for the next tail). Caller holds <c>sync</c>, between
    /// operations (the end of a commit round, the maintenance tick): an operation may hold spans of a cache. Files stay
    /// open (a commit round may be using them); the cache expiry closes idle ones.
    /// </summary>
    private void TrimSealedCaches()
    {
        var cached = 0;
        foreach (var block in blocks)
        {
            if (block != tail && block.Cache is not null)
            {
                cached++;
            }
        }

        while (cached > MaxCachedSealedBlocks)
        {
            MessageBlock? oldest = null;
            foreach (var block in blocks)
            {
                if (block != tail && block.Cache is not null && block.Synced == block.End && (oldest is null || block.LastUse < oldest.LastUse))
                {
                    oldest = block;
                }
            }

            if (oldest is null)
            {
                // Not yet durable: the commit round that syncs them trims again.
                return;
            }

            oldest.ReleaseCache();
            cached--;
        }

        trimWanted = false;
    }

    /// <summary>Makes room for <paramref name="length"/> more bytes in the tail's cache, rolling to a new block when full.</summary>
    private MessageBlock ReserveTail(int length)
    {
        var block = tail;
        if (block is null || (block.End + length > blockSize && block.End > 0))
        {
            block = NewTailBlock(length);
        }

        var cache = block.Cache!;
        var needed = block.End + length;
        if (needed > cache.Length)
        {
            // Grow by doubling; the old array may be in a commit round's hands, so it is returned after the round.
            var grown = buffers.RentCache((int)Math.Max(needed, Math.Min(Math.Max(blockSize, needed), (long)cache.Length * 2)));
            cache.AsSpan(0, (int)block.End).CopyTo(grown);
            retired.Add(cache);
            block.Cache = grown;
        }

        return block;
    }

    /// <summary>Loads a block's records into its cache, verifying each record's checksum. Caller holds <c>sync</c>.</summary>
    private void EnsureLoaded(MessageBlock block)
    {
        block.LastAccess = Environment.TickCount64;
        block.LastUse = ++useClock;
        if (block.Cache is not null)
        {
            return;
        }

        var file = block.File ??= fs.Open(block.Path, create: false);
        var raw = BlockReader.ReadRecords(file, block, buffers, out var length);
        block.Cache = raw;
        if (block.End == 0 || block.End > length)
        {
            block.End = length;
        }

        block.Flushed = block.Synced = block.End;
        IndexRecords(block, raw.AsSpan(0, (int)length), fromLoad: true);

        // Not here: a caller may still hold a span of another block's cache (a subject); the next commit round or
        // maintenance tick, between operations, trims.
        trimWanted = true;
    }

    /// <summary>
    /// Builds the offset table of a loaded block. Records that fail their checksum are skipped by resynchronising on
    /// the next valid record; live sequences left without a record are reported lost and never served.
    /// </summary>
    private void IndexRecords(MessageBlock block, ReadOnlySpan<byte> records, bool fromLoad)
    {
        if (block.HasMessages)
        {
            for (var s = block.First; s <= block.Last; s++)
            {
                block.SetOffset(s, MessageBlock.NoOffset);
            }
        }

        var scanner = new RecordScanner(records);
        var previous = 0UL;
        while (scanner.Next(out var header, out var position))
        {
            // Records outside the range or out of order were cut off by a truncate; markers were applied on recovery.
            if (header.Kind == RecordKind.Message && header.Sequence > previous && block.InRange(header.Sequence))
            {
                previous = header.Sequence;
                block.SetOffset(header.Sequence, (uint)position);
            }
        }

        if (fromLoad && block.HasMessages)
        {
            for (var s = block.First; s <= block.Last; s++)
            {
                if (block.IsLive(s) && block.OffsetOf(s) == MessageBlock.NoOffset)
                {
                    LoseMessage(block, s);
                }
            }
        }
    }

    /// <summary>A live message whose record is corrupt or missing: it is removed from the state and counted lost.</summary>
    private void LoseMessage(MessageBlock block, ulong sequence)
    {
        block.MarkNotLive(sequence);
        block.Messages--;
        messages--;
        lost++;

        // Its subject is unknown: the per-subject index is rebuilt at the next maintenance tick.
        subjectsSuspect = true;
        FileStoreLog.MessageLost(logger, config.Name, sequence, block.Id);
        if (sequence == first)
        {
            AdvanceFirst();
        }
    }

    /// <summary>Copies the message at <paramref name="offset"/> of a loaded block into <paramref name="message"/>.</summary>
    private static bool ReadMessage(MessageBlock block, uint offset, StoredMessage message)
    {
        var record = block.Cache.AsSpan((int)offset);
        var header = RecordFormat.ReadVerified(record);
        record = record[..header.Length];
        var body = record[RecordFormat.HeaderSize..^4];
        if (block.Cipher is null)
        {
            var subject = body[..header.SubjectLength];
            var headers = body.Slice(header.SubjectLength, header.HeadersLength);
            var payload = body[(header.SubjectLength + header.HeadersLength)..];
            message.Set(header.Sequence, header.Timestamp, subject, headers, payload);
            return true;
        }

        var target = message.Prepare(header.Sequence, header.Timestamp, header.SubjectLength, header.HeadersLength, header.PayloadLength(encrypted: true));
        return block.Cipher.TryDecrypt(
            body[..RecordFormat.NonceSize],
            body[RecordFormat.NonceSize..^RecordFormat.TagSize],
            body[^RecordFormat.TagSize..],
            target,
            record[..RecordFormat.HeaderSize]);
    }

    /// <summary>The subject of the message at an offset (decrypted into the scratch buffer when encrypted).</summary>
    private ReadOnlySpan<byte> SubjectAt(MessageBlock block, uint offset, out RecordHeader header)
    {
        var record = block.Cache.AsSpan((int)offset);
        header = RecordFormat.ReadVerified(record);
        record = record[..header.Length];
        var body = record[RecordFormat.HeaderSize..^4];
        if (block.Cipher is null)
        {
            return body[..header.SubjectLength];
        }

        var plainLength = body.Length - RecordFormat.CipherOverhead;
        if (scratch.Length < plainLength)
        {
            scratch = new byte[Math.Max(plainLength, scratch.Length * 2)];
        }

        if (!block.Cipher.TryDecrypt(body[..RecordFormat.NonceSize], body[RecordFormat.NonceSize..^RecordFormat.TagSize], body[^RecordFormat.TagSize..], scratch.AsSpan(0, plainLength), record[..RecordFormat.HeaderSize]))
        {
            return [];
        }

        return scratch.AsSpan(0, header.SubjectLength);
    }

    /// <summary>The subject and accounted size of a live message (loading its block).</summary>
    private ReadOnlySpan<byte> SubjectOf(MessageBlock block, ulong sequence, out ulong size)
    {
        EnsureLoaded(block);
        var offset = block.OffsetOf(sequence);
        size = 0;
        if (offset == MessageBlock.NoOffset)
        {
            return [];
        }

        var subject = SubjectAt(block, offset, out var header);
        size = RecordFormat.AccountedSize(header.SubjectLength, header.HeadersLength, header.PayloadLength(block.Encrypted));
        return subject;
    }

    public async ValueTask DisposeAsync()
    {
        if (!BeginClose())
        {
            return;
        }

        await StopBackgroundAsync().ConfigureAwait(false);
        foreach (var consumer in SnapshotConsumers())
        {
            await consumer.CloseAsync().ConfigureAwait(false);
        }

        lock (ioSync)
        {
            try
            {
                if (failure is null)
                {
                    CommitRound(force: true, checkpoint: true, closing: true);
                    TrimTailFile();
                }
            }
            catch (IOException ex)
            {
                FileStoreLog.WriteFailed(logger, config.Name, ex);
            }

            lock (sync)
            {
                CloseBlocks();
            }
        }
    }

    /// <summary>
    /// A clean stop cuts the tail block's preallocated zeros, so the next start finds the file ending at its last
    /// record (and does not report a torn write). Caller holds <c>ioSync</c>; the committer has stopped.
    /// </summary>
    private void TrimTailFile()
    {
        if (tail is { File: { } file, Compressed: false } block && block.Allocated > BlockFileHeader.Size + block.End)
        {
            file.SetLength(BlockFileHeader.Size + block.End);
            file.Sync();
            block.Allocated = BlockFileHeader.Size + block.End;
        }
    }

    /// <summary>Closes every block's file and returns its buffers (closing or deleting). Caller holds <c>sync</c>.</summary>
    private void CloseBlocks()
    {
        foreach (var block in blocks)
        {
            block.CloseFile();
            block.ReleaseCache();
            block.Cipher?.Dispose();
        }

        spare?.Cipher?.Dispose();
        spare = null;
        ReturnRetired();
        buffers.Clear();
    }

    private bool BeginClose()
    {
        lock (sync)
        {
            if (closed)
            {
                return false;
            }

            closed = true;
            Monitor.PulseAll(sync);
            return true;
        }
    }

    private List<FileConsumerStore> SnapshotConsumers()
    {
        lock (sync)
        {
            return [.. consumers];
        }
    }
}
