using System.Numerics;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// One message block file (<c>msgs/&lt;id&gt;.blk</c>): its sequence range and counters (always in memory), its records
/// (the cache, loaded on demand, always present for the block being appended to), an offset per sequence and the
/// bitmap of sequences in the range that are not live (removed, erased, skipped). The stream store's lock guards
/// every field; the committer reads <see cref="Cache"/> between <see cref="Flushed"/> and <see cref="End"/> outside
/// the lock, which is safe because appended bytes never change and a replaced array is returned to the pool only
/// after the commit round that may hold it (see <see cref="StreamCommitter"/> and <see cref="BlockSet.ReturnRetired"/>).
/// Its buffers come from and go back to the stream's <see cref="BlockBuffers"/>.
/// </summary>
internal sealed class MessageBlock
{
    public const uint NoOffset = uint.MaxValue;

    private ulong[]? notLive;

    public MessageBlock(BlockBuffers buffers, uint id, string path, byte flags, byte[] salt, RecordCipher? cipher)
    {
        Buffers = buffers;
        Id = id;
        Path = path;
        Flags = flags;
        Salt = salt;
        Cipher = cipher;
    }

    public BlockBuffers Buffers { get; }

    public uint Id { get; }

    public string Path { get; }

    /// <summary><see cref="Format.BlockFileHeader"/> flags.</summary>
    public byte Flags { get; set; }

    public byte[] Salt { get; }

    public RecordCipher? Cipher { get; }

    public bool Encrypted => Cipher is not null;

    public bool Compressed => (Flags & Format.BlockFileHeader.Compressed) != 0;

    public IStorageFile? File { get; set; }

    /// <summary>
    /// Whether the file exists on disk. A new tail block's file is created by the committer with its first write (off
    /// the publisher's path); the directory fsync of that same round makes the entry durable.
    /// </summary>
    public bool Created { get; set; }

    /// <summary>The first sequence of the range; <see cref="Last"/> + 1 while the block holds no message.</summary>
    public ulong First { get; set; }

    /// <summary>The last message sequence written to the block (or the stream's last before it, while empty).</summary>
    public ulong Last { get; set; }

    public long FirstTimestamp { get; set; }

    public long LastTimestamp { get; set; }

    /// <summary>Live messages.</summary>
    public ulong Messages { get; set; }

    /// <summary>Live accounted bytes.</summary>
    public ulong Bytes { get; set; }

    /// <summary>Bytes of records (raw, uncompressed), live or not: where the next record goes.</summary>
    public long End { get; set; }

    /// <summary>Raw bytes written to the file.</summary>
    public long Flushed { get; set; }

    /// <summary>Raw bytes fsynced.</summary>
    public long Synced { get; set; }

    /// <summary>File bytes reserved with <see cref="IStorageFile.Preallocate"/>.</summary>
    public long Allocated { get; set; }

    /// <summary>No more appends: a later block is the tail.</summary>
    public bool Sealed { get; set; }

    /// <summary>Marker records (tombstones, heads) in the block.</summary>
    public int Markers { get; set; }

    /// <summary>The records [0, End), or <see langword="null"/> when not loaded.</summary>
    public byte[]? Cache { get; set; }

    /// <summary>The record offset of sequence First + i, or <see cref="NoOffset"/>; valid while <see cref="Cache"/> is loaded.</summary>
    public uint[]? Offsets { get; set; }

    /// <summary>When the block was last read or appended to (milliseconds, for the cache expiry).</summary>
    public long LastAccess { get; set; }

    /// <summary>The store's use counter at the last read or append: strictly ordered, for the cache bound's LRU.</summary>
    public long LastUse { get; set; }

    public bool HasMessages => Last >= First;

    public ulong RangeLength => HasMessages ? Last - First + 1 : 0;

    public bool InRange(ulong sequence) => sequence >= First && sequence <= Last;

    public bool IsLive(ulong sequence) => InRange(sequence) && !IsNotLiveBit(sequence - First);

    /// <summary>Whether every sequence of the range is live (no bitmap needed).</summary>
    public bool AllLive => notLive is null;

    public ulong[]? NotLiveBits => notLive;

    public void SetNotLiveBits(ulong[]? bits) => notLive = bits;

    public void MarkNotLive(ulong sequence)
    {
        var index = sequence - First;
        var word = (int)(index >> 6);
        if (notLive is null || word >= notLive.Length)
        {
            var capacity = Math.Max(word + 1, (int)((RangeLength + 63) >> 6));
            var grown = Buffers.RentBits(Math.Max(capacity, notLive is null ? 1 : notLive.Length * 2));
            if (notLive is not null)
            {
                notLive.CopyTo(grown, 0);
                Buffers.ReturnBits(notLive);
            }

            notLive = grown;
        }

        notLive[word] |= 1UL << (int)(index & 63);
    }

    /// <summary>The next live sequence at or after <paramref name="sequence"/> inside the range, or 0.</summary>
    public ulong NextLive(ulong sequence)
    {
        if (!HasMessages || sequence > Last)
        {
            return 0;
        }

        if (sequence < First)
        {
            sequence = First;
        }

        if (notLive is null)
        {
            return sequence;
        }

        var index = sequence - First;
        var count = RangeLength;
        while (index < count)
        {
            var word = (int)(index >> 6);
            if (word >= notLive.Length)
            {
                return First + index;
            }

            var bits = ~notLive[word] >> (int)(index & 63);
            if (bits != 0)
            {
                var found = index + (ulong)BitOperations.TrailingZeroCount(bits);
                return found < count ? First + found : 0;
            }

            index = (ulong)(word + 1) << 6;
        }

        return 0;
    }

    /// <summary>The previous live sequence at or before <paramref name="sequence"/> inside the range, or 0.</summary>
    public ulong PreviousLive(ulong sequence)
    {
        if (!HasMessages || sequence < First)
        {
            return 0;
        }

        if (sequence > Last)
        {
            sequence = Last;
        }

        for (var s = sequence; s >= First && s > 0; s--)
        {
            if (!IsNotLiveBit(s - First))
            {
                return s;
            }
        }

        return 0;
    }

    /// <summary>Gives the bitmap back (the block left the stream: nothing asks whether its sequences are live).</summary>
    public void ReleaseBits()
    {
        if (notLive is not null)
        {
            Buffers.ReturnBits(notLive);
            notLive = null;
        }
    }

    /// <summary>Records the offset of a sequence appended or indexed, growing the offset table from the pool.</summary>
    public void SetOffset(ulong sequence, uint offset)
    {
        var index = (int)(sequence - First);
        if (Offsets is null || index >= Offsets.Length)
        {
            var grown = Buffers.RentOffsets(Math.Max(index + 1, Offsets is null ? 1024 : Offsets.Length * 2));
            if (Offsets is not null)
            {
                Offsets.AsSpan().CopyTo(grown);
                Buffers.ReturnOffsets(Offsets);
            }

            Offsets = grown;
        }

        Offsets[index] = offset;
    }

    /// <summary>The offset of a sequence in the cache, or <see cref="NoOffset"/>.</summary>
    public uint OffsetOf(ulong sequence)
    {
        var index = sequence - First;
        return Offsets is not null && InRange(sequence) && index < (ulong)Offsets.Length ? Offsets[index] : NoOffset;
    }

    /// <summary>Forgets the loaded records (returns the buffers to the store's free lists).</summary>
    public void ReleaseCache()
    {
        if (Cache is not null)
        {
            Buffers.ReturnCache(Cache);
            Cache = null;
        }

        if (Offsets is not null)
        {
            Buffers.ReturnOffsets(Offsets);
            Offsets = null;
        }
    }

    public void CloseFile()
    {
        File?.Dispose();
        File = null;
    }

    private bool IsNotLiveBit(ulong index)
    {
        if (notLive is null)
        {
            return false;
        }

        var word = index >> 6;
        return word < (ulong)notLive.Length && (notLive[word] & (1UL << (int)(index & 63))) != 0;
    }
}
