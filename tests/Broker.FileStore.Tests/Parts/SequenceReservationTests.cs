using System.Buffers.Binary;
using Broker.Storage.FileStore.Internal;

namespace Broker.FileStore.Tests.Parts;

/// <summary><see cref="SequenceReservation"/>: <c>seq.db</c> is durable when written, survives a torn slot, and asks to be extended ahead.</summary>
public sealed class SequenceReservationTests
{
    private const string Path = StoreParts.Msgs + "/" + SequenceReservation.FileName;

    [Fact]
    public void A_written_reservation_survives_a_power_cut()
    {
        var disk = StoreParts.NewDisk();
        Assert.Equal(0UL, new SequenceReservation(disk, StoreParts.Msgs).Read());

        var reservation = new SequenceReservation(disk, StoreParts.Msgs);
        reservation.Write(100);
        reservation.Write(200);
        var after = disk.PowerCut();
        Assert.Equal(200UL, new SequenceReservation(after, StoreParts.Msgs).Read());
    }

    [Fact]
    public void A_torn_newer_slot_leaves_the_older_one()
    {
        var disk = StoreParts.NewDisk();
        var reservation = new SequenceReservation(disk, StoreParts.Msgs);
        reservation.Write(100);
        reservation.Write(200);

        // The newer write went to slot 0 (counter 2); tear its value.
        var bytes = disk.ReadFile(Path);
        Assert.Equal(2UL, BinaryPrimitives.ReadUInt64LittleEndian(bytes));
        bytes[9] ^= 0xFF;
        disk.WriteFileDurably(Path, bytes);
        var reread = new SequenceReservation(disk, StoreParts.Msgs);
        Assert.Equal(100UL, reread.Read());

        // The slot counter continues from the one read: the next write replaces the torn slot, not the good one.
        reread.Write(300);
        Assert.Equal(300UL, new SequenceReservation(disk, StoreParts.Msgs).Read());
        bytes = disk.ReadFile(Path);
        Assert.Equal(100UL, BinaryPrimitives.ReadUInt64LittleEndian(bytes.AsSpan(32 + 8)));
    }

    [Fact]
    public void A_round_extends_it_a_step_ahead_when_within_half_a_step_and_a_clean_stop_writes_the_exact_last()
    {
        var reservation = new SequenceReservation(StoreParts.NewDisk(), StoreParts.Msgs) { Reserved = SequenceReservation.Step };
        Assert.Equal(0UL, reservation.NextFor(10, closing: false));
        Assert.Equal(0UL, reservation.NextFor(SequenceReservation.Step / 2, closing: false));
        Assert.Equal((SequenceReservation.Step / 2) + 1 + SequenceReservation.Step, reservation.NextFor((SequenceReservation.Step / 2) + 1, closing: false));
        Assert.Equal(10UL, reservation.NextFor(10, closing: true));
    }
}
