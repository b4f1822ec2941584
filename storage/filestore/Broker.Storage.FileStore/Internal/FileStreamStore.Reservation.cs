using System.Buffers.Binary;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Sequences are never reused, even after a power cut that loses records never acknowledged (a consumer may have seen
/// them). As PostgreSQL logs its sequences ahead, the store keeps a durable reservation in <c>msgs/seq.db</c>: no
/// sequence above it is assigned until a larger reservation is fsynced (the committer extends it half a step ahead,
/// so appends do not wait). After a crash the stream's last sequence becomes at least the reservation, so sequences
/// handed out but lost are skipped, not reused (at most <see cref="ReservationStep"/>). A clean stop writes the exact
/// last sequence: no jump. The file has two checksummed slots written alternately, so a torn write leaves the other.
/// </summary>
internal sealed partial class FileStreamStore
{
    internal const ulong ReservationStep = 1 << 16;
    private const string ReservationFile = "seq.db";
    private const int SlotSize = 32;

    private ulong reserved;
    private ulong reservationCounter;
    private IStorageFile? reservationFile;

    private string ReservationPath => Path.Combine(blocksDirectory, ReservationFile);

    /// <summary>Writes and fsyncs a new reservation. Caller holds <c>ioSync</c> (or is the only thread).</summary>
    private void WriteReservation(ulong value)
    {
        if (reservationFile is null)
        {
            var existed = fs.FileExists(ReservationPath);
            reservationFile = fs.Open(ReservationPath, create: true);
            if (!existed)
            {
                reservationFile.SetLength(2 * SlotSize);
                reservationFile.Sync();
                fs.SyncDirectory(blocksDirectory);
            }
        }

        reservationCounter++;
        Span<byte> slot = stackalloc byte[SlotSize];
        slot.Clear();
        BinaryPrimitives.WriteUInt64LittleEndian(slot, reservationCounter);
        BinaryPrimitives.WriteUInt64LittleEndian(slot[8..], value);
        BinaryPrimitives.WriteUInt32LittleEndian(slot[16..], Crc32C.Compute(slot[..16]));
        reservationFile.Write(slot, (long)(reservationCounter % 2) * SlotSize);
        reservationFile.Sync();
        lock (sync)
        {
            reserved = value;
            Monitor.PulseAll(sync);
        }
    }

    /// <summary>Reads the reservation (the newer valid slot); 0 when there is none.</summary>
    private ulong ReadReservation()
    {
        var data = fs.ReadAll(ReservationPath);
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

            var counter = BinaryPrimitives.ReadUInt64LittleEndian(slot);
            if (counter >= bestCounter && counter > 0)
            {
                bestCounter = counter;
                value = BinaryPrimitives.ReadUInt64LittleEndian(slot[8..]);
            }
        }

        reservationCounter = bestCounter;
        return value;
    }

    /// <summary>
    /// Waits (releasing the lock) until <paramref name="sequence"/> is inside the durable reservation. Only a disk far
    /// slower than the publish rate makes an append wait here. Caller holds <c>sync</c>.
    /// </summary>
    private bool AwaitReservation(ulong sequence)
    {
        while (sequence > reserved)
        {
            if (closed || failure is not null)
            {
                return false;
            }

            ScheduleCommit();
            Monitor.Wait(sync, 100);
        }

        return true;
    }
}
