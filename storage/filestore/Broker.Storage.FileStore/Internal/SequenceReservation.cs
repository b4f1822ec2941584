using System.Buffers.Binary;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Sequences are never reused, even after a power cut that loses records never acknowledged (a consumer may have seen
/// them). As PostgreSQL logs its sequences ahead, the store keeps a durable reservation in <c>msgs/seq.db</c>: no
/// sequence above it is assigned until a larger reservation is fsynced (the committer extends it half a step ahead,
/// so appends do not wait). After a crash the stream's last sequence becomes at least the reservation, so sequences
/// handed out but lost are skipped, not reused (at most <see cref="Step"/>). A clean stop writes the exact last
/// sequence: no jump. The file has two checksummed slots written alternately, so a torn write leaves the other.
/// </summary>
internal sealed class SequenceReservation
{
    internal const ulong Step = 1 << 16;
    internal const string FileName = "seq.db";
    private const int SlotSize = 32;

    private readonly IStorageFileSystem fs;
    private readonly string directory;
    private readonly string path;
    private ulong counter;
    private IStorageFile? file;

    public SequenceReservation(IStorageFileSystem fs, string blocksDirectory)
    {
        this.fs = fs;
        directory = blocksDirectory;
        path = Path.Combine(blocksDirectory, FileName);
    }

    /// <summary>
    /// The highest sequence an append may take: the last value written (and fsynced). Set by the committer, which
    /// wakes the appends waiting for it; read and set under the stream store's lock.
    /// </summary>
    public ulong Reserved { get; set; }

    /// <summary>
    /// The reservation a commit round should write now: the exact last sequence when <paramref name="closing"/>, a step
    /// ahead when the last sequence is within half a step of the reservation, else 0 (none).
    /// </summary>
    public ulong NextFor(ulong last, bool closing) => closing ? last : last + (Step / 2) > Reserved ? last + Step : 0;

    /// <summary>Writes and fsyncs a new reservation (not <see cref="Reserved"/>). Caller holds the I/O lock (or is the only thread).</summary>
    public void Write(ulong value)
    {
        if (file is null)
        {
            var existed = fs.FileExists(path);
            file = fs.Open(path, create: true);
            if (!existed)
            {
                file.SetLength(2 * SlotSize);
                file.Sync();
                fs.SyncDirectory(directory);
            }
        }

        counter++;
        Span<byte> slot = stackalloc byte[SlotSize];
        slot.Clear();
        BinaryPrimitives.WriteUInt64LittleEndian(slot, counter);
        BinaryPrimitives.WriteUInt64LittleEndian(slot[8..], value);
        BinaryPrimitives.WriteUInt32LittleEndian(slot[16..], Crc32C.Compute(slot[..16]));
        file.Write(slot, (long)(counter % 2) * SlotSize);
        file.Sync();
    }

    /// <summary>Reads the reservation (the newer valid slot); 0 when there is none. Continues its slot counter.</summary>
    public ulong Read()
    {
        var data = fs.ReadAll(path);
        if (data is null)
        {
            return 0;
        }

        ulong bestCounter = 0, value = 0;
        for (var offset = 0; offset + SlotSize <= data.Length; offset += SlotSize)
        {
            var slot = data.AsSpan(offset, SlotSize);
            if (BinaryPrimitives.ReadUInt32LittleEndian(slot[16..]) != Crc32C.Compute(slot[..16]))
            {
                continue;
            }

            var slotCounter = BinaryPrimitives.ReadUInt64LittleEndian(slot);
            if (slotCounter >= bestCounter && slotCounter > 0)
            {
                bestCounter = slotCounter;
                value = BinaryPrimitives.ReadUInt64LittleEndian(slot[8..]);
            }
        }

        counter = bestCounter;
        return value;
    }
}
