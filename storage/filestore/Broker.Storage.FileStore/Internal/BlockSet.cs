using System.Globalization;
using System.Security.Cryptography;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The ordered message blocks of one stream (nats-server's <c>fs.blks</c>): lookup by sequence, the tail block that
/// appends go to and its rotation, the blocks removed whose files go with the next checkpoint (the graveyard), and
/// the free lists their buffers come from. Not thread-safe: the stream store's lock guards every call; the committer
/// reads a block's cache between <see cref="MessageBlock.Flushed"/> and <see cref="MessageBlock.End"/> outside it,
/// which is why a cache array replaced while growing is only returned after the round (<see cref="ReturnRetired"/>).
/// </summary>
internal sealed partial class BlockSet
{
    private readonly IStorageFileSystem fs;
    private readonly string directory;
    private readonly long blockSize;
    private readonly StreamKey? key;
    private readonly RecordCodec codec;
    private readonly BlockBuffers buffers;
    private readonly List<MessageBlock> blocks = [];
    private readonly List<byte[]> retired = [];
    private readonly List<MessageBlock> graveyard = [];

    private MessageBlock? tail;
    private MessageBlock? spare;
    private uint nextBlockId = 1;
    private bool newFiles;
    private bool changed;

    public BlockSet(IStorageFileSystem fs, string directory, long blockSize, StreamKey? key, RecordCodec codec)
    {
        this.fs = fs;
        this.directory = directory;
        this.blockSize = blockSize;
        this.key = key;
        this.codec = codec;
        buffers = new BlockBuffers(blockSize);
    }

    /// <summary>Told of a live message whose record a load found corrupt or missing (wired to the ledger once).</summary>
    public Action<MessageBlock, ulong>? MessageLost { get; set; }

    public int Count => blocks.Count;

    public MessageBlock this[int index] => blocks[index];

    /// <summary>The block appends go to, or <see langword="null"/> until the next append begins one.</summary>
    public MessageBlock? Tail => tail;

    public long BlockSize => blockSize;

    public BlockBuffers Buffers => buffers;

    /// <summary>The next block id a checkpoint records: the prepared spare has taken its id but has no file yet.</summary>
    public uint NextIdForCheckpoint => spare?.Id ?? nextBlockId;

    /// <summary>The next block id (recovery moves it past every file found).</summary>
    public uint NextBlockId
    {
        get => nextBlockId;
        set => nextBlockId = value;
    }

    /// <summary>A block begun whose file (created by the next commit round) still needs its directory entry fsynced.</summary>
    public bool NewFiles => newFiles;

    /// <summary>A block sealed or removed since the last checkpoint: the next one should record the new layout.</summary>
    public bool ChangedSinceCheckpoint => changed;

    /// <summary>Removed blocks whose files are deleted once a checkpoint that no longer lists them is durable.</summary>
    public bool HasBuried => graveyard.Count > 0;

    /// <summary>
    /// The block size: <see cref="FileStoreOptions.BlockSize"/> when set, else nats-server's defaults (filestore.go):
    /// 8 MiB for limits streams, 4 MiB for interest, work-queue and per-subject-limited (KV) streams, sized down for a
    /// small max_bytes, at most 2 MiB when encrypted.
    /// </summary>
    public static long ChooseSize(FileStoreOptions options, StreamStoreConfig config, bool encrypted)
    {
        if (options.BlockSize > 0)
        {
            return options.BlockSize;
        }

        var size = config.Retention == RetentionPolicy.Limits && config.MaxMessagesPerSubject <= 0 ? 8L << 20 : 4L << 20;
        if (config.MaxBytes > 0)
        {
            var quarter = config.MaxBytes / 4;
            size = quarter <= 32 << 10 ? 32 << 10 : quarter >= 8L << 20 ? 8L << 20 : Math.Min(size, 4L << 20);
        }

        return encrypted ? Math.Min(size, 2L << 20) : size;
    }

    public List<MessageBlock>.Enumerator GetEnumerator() => blocks.GetEnumerator();

    public bool Contains(MessageBlock block) => blocks.Contains(block);

    public string PathOf(uint id) => Path.Combine(directory, id.ToString(CultureInfo.InvariantCulture) + ".blk");

    /// <summary>
    /// Makes the next block the tail, its range starting after <paramref name="last"/>. It allocates nothing when the
    /// committer has prepared the block object (<see cref="PrepareSpare"/>) and a sealed block has given back a
    /// full-size cache: the file is created by the committer with the block's first write, so no system call happens
    /// here either.
    /// </summary>
    public MessageBlock NewTail(int minimumCapacity, ulong last)
    {
        if (tail is not null)
        {
            tail.Sealed = true;
            tail.LastUse = ++useClock;

            // A sealed block is a natural checkpoint (taken at most once a second): replay stays within a block or so.
            changed = true;
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

    /// <summary>
    /// Prepares the next tail's block object on the committer's thread, so a block roll on a publisher's thread
    /// allocates nothing. Its id is taken: a checkpoint records it as the next id.
    /// </summary>
    public void PrepareSpare()
    {
        if (spare is null && tail is not null)
        {
            spare = NewBlockObject();
        }
    }

    /// <summary>Makes room for <paramref name="length"/> more bytes in the tail's cache, rolling to a new block when full.</summary>
    public MessageBlock ReserveTail(int length, ulong last)
    {
        var block = tail;
        if (block is null || (block.End + length > blockSize && block.End > 0))
        {
            block = NewTail(length, last);
        }

        if (block.Cache is null)
        {
            // The tail recovery left on disk (FinishRecovery): its records are read once, by its first append.
            EnsureLoaded(block);
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

    /// <summary>A block object for a file that exists (recovery): the next id is not taken.</summary>
    public MessageBlock Existing(uint id, byte flags, byte[] salt) => new(buffers, id, PathOf(id), flags, salt, key?.ForBlock(salt));

    /// <summary>Adds a recovered block after the others.</summary>
    public void Add(MessageBlock block) => blocks.Add(block);

    /// <summary>Removes blocks wholly below <paramref name="first"/> (never the tail).</summary>
    public void RetireBelow(ulong first)
    {
        while (blocks.Count > 0 && blocks[0] != tail && blocks[0].Last < first)
        {
            Retire(blocks[0]);
            blocks.RemoveAt(0);
        }
    }

    /// <summary>Removes every block (a purge): the next append begins a new tail.</summary>
    public void RetireAll()
    {
        foreach (var block in blocks)
        {
            Retire(block);
        }

        blocks.Clear();
        tail = null;
    }

    /// <summary>The graveyard as it is now: the files a checkpoint being written lets go.</summary>
    public MessageBlock[] TakeBuried() => graveyard.Count == 0 ? [] : [.. graveyard];

    /// <summary>The files of these blocks are deleted: they leave the graveyard and give back their cache and cipher.</summary>
    public void Buried(MessageBlock[] buried)
    {
        foreach (var block in buried)
        {
            graveyard.Remove(block);
            block.ReleaseCache();
            block.Cipher?.Dispose();
        }
    }

    /// <summary>A checkpoint was taken: its layout is the current one.</summary>
    public void CheckpointTaken() => changed = false;

    /// <summary>Takes the new-files flag: the commit round taking it fsyncs the directory.</summary>
    public bool TakeNewFiles()
    {
        var taken = newFiles;
        newFiles = false;
        return taken;
    }

    /// <summary>Whether some block has bytes not yet fsynced.</summary>
    public bool HasUnsyncedBytes()
    {
        foreach (var block in blocks)
        {
            if (block.Synced < block.End)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Returns replaced cache arrays to the free list; no round holds them any more.</summary>
    public void ReturnRetired()
    {
        foreach (var array in retired)
        {
            buffers.ReturnCache(array);
        }

        retired.Clear();
    }

    /// <summary>
    /// After a replay: the last block stays the tail with its records in memory, the others are sealed and let go
    /// of their caches and files (recovery memory stays bounded); a compressed or unreadable last block is sealed too.
    /// A tail whose records were left on disk (<paramref name="tailOnDisk"/>: a clean stop's file, nothing to replay)
    /// stays the tail and is read by its first read or append (<see cref="EnsureLoaded"/>).
    /// </summary>
    /// <param name="tailOnDisk">Whether recovery left the last block's records unread on purpose.</param>
    public void FinishRecovery(bool tailOnDisk = false)
    {
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

        if (tail is not null && (tail.Compressed || (tail.Cache is null && !tailOnDisk)))
        {
            tail.Sealed = true;
            tail.ReleaseCache();
            tail = null;
        }
    }

    /// <summary>
    /// A clean stop cuts the tail block's preallocated zeros, so the next start finds the file ending at its last
    /// record (and does not report a torn write). Caller holds the I/O lock; the committer has stopped.
    /// </summary>
    public void TrimTailFile()
    {
        if (tail is { File: { } file, Compressed: false } block && block.Allocated > BlockFileHeader.Size + block.End)
        {
            file.SetLength(BlockFileHeader.Size + block.End);
            file.Sync();
            block.Allocated = BlockFileHeader.Size + block.End;
        }
    }

    /// <summary>Closes every block's file and returns its buffers (closing or deleting).</summary>
    public void CloseAll()
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

    /// <summary>Forgets every block (the stream is deleted).</summary>
    public void Clear() => blocks.Clear();

    /// <summary>A block object with the next id, its salt and cipher, and no file yet.</summary>
    private MessageBlock NewBlockObject()
    {
        var id = nextBlockId++;
        var salt = RandomNumberGenerator.GetBytes(16);
        var flags = key is null ? (byte)0 : BlockFileHeader.Encrypted;
        return new MessageBlock(buffers, id, PathOf(id), flags, salt, key?.ForBlock(salt));
    }

    /// <summary>
    /// A block wholly removed: its file goes once a checkpoint that no longer lists it is durable. Its bitmap and, when
    /// no commit round holds its bytes, its cache go back to the free lists now.
    /// </summary>
    private void Retire(MessageBlock block)
    {
        if (block == tail)
        {
            tail = null;
        }

        block.ReleaseBits();
        if (block.Flushed == block.End)
        {
            block.ReleaseCache();
        }

        graveyard.Add(block);
        changed = true;
    }
}
