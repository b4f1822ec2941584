using Broker.Storage.FileStore.Internal;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.FileStore.Tests.Parts;

/// <summary>
/// <see cref="StreamCommitter"/>: a round makes what was appended durable before it completes the waits; a failed
/// fsync fails them and every later one; a sync interval acknowledges after the write and fsyncs on demand; appends
/// wait for the reservation only until a round extends it; a closed committer refuses waits.
/// </summary>
public sealed class StreamCommitterTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(10);

    private static StoreParts Started(TimeSpan? syncInterval = null)
    {
        var parts = new StoreParts(syncInterval: syncInterval);
        parts.Committer.Reserve(SequenceReservation.Step);
        parts.Committer.Start();
        return parts;
    }

    private static long DurableLength(SimulatedDisk disk, MessageBlock block) => disk.PowerCut().ReadAll(block.Path)?.Length ?? -1;

    [Fact(Timeout = 30_000)]
    public async Task A_round_makes_the_appends_durable_before_it_completes_their_waits()
    {
        var parts = Started();
        ulong last = 0;
        for (var i = 1; i <= 20; i++)
        {
            last = parts.Append("S.a", "message-" + i);
        }

        await parts.Committer.WaitForDurableAsync(last, CancellationToken.None).AsTask().WaitAsync(Limit);
        Assert.True(parts.Committer.DurableSequence >= last);
        await parts.Committer.StopAsync().WaitAsync(Limit);

        // Everything acknowledged is on the platter: the file (entry and data) survives a power cut.
        var tail = parts.Blocks.Tail!;
        Assert.True(DurableLength(parts.Disk, tail) >= BlockFileHeader.Size + tail.End);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_failed_fsync_fails_the_waits_and_every_later_one()
    {
        var parts = Started();
        parts.Disk.FailSyncs = true;
        var sequence = parts.Append("S.a", "lost");
        await Assert.ThrowsAsync<IOException>(() => parts.Committer.WaitForDurableAsync(sequence, CancellationToken.None).AsTask().WaitAsync(Limit));
        lock (parts.Sync)
        {
            Assert.True(parts.Committer.Failed);
        }

        await Assert.ThrowsAsync<IOException>(() => parts.Committer.WaitForDurableAsync(sequence, CancellationToken.None).AsTask().WaitAsync(Limit));
        await Assert.ThrowsAsync<IOException>(() => parts.Committer.FlushAsync(CancellationToken.None).AsTask().WaitAsync(Limit));
        Assert.Equal(0UL, parts.Committer.DurableSequence);
        await parts.Committer.StopAsync().WaitAsync(Limit);
    }

    [Fact(Timeout = 30_000)]
    public async Task Under_a_sync_interval_a_round_acknowledges_after_the_write_and_a_flush_fsyncs()
    {
        var parts = Started(TimeSpan.FromHours(1));
        var sequence = parts.Append("S.a", "written");
        await parts.Committer.WaitForDurableAsync(sequence, CancellationToken.None).AsTask().WaitAsync(Limit);
        var tail = parts.Blocks.Tail!;
        lock (parts.Sync)
        {
            Assert.Equal(tail.End, tail.Flushed);
            Assert.True(tail.Synced < tail.End);
        }

        await parts.Committer.FlushAsync(CancellationToken.None).AsTask().WaitAsync(Limit);
        lock (parts.Sync)
        {
            Assert.Equal(tail.End, tail.Synced);
        }

        await parts.Committer.StopAsync().WaitAsync(Limit);
        Assert.True(DurableLength(parts.Disk, tail) >= BlockFileHeader.Size + tail.End);
    }

    [Fact(Timeout = 30_000)]
    public async Task An_append_beyond_the_reservation_waits_until_a_round_extends_it()
    {
        var parts = new StoreParts();
        Assert.Equal(0UL, parts.Reservation.Reserved);
        parts.Committer.Start();
        var waited = await Task.Run(() =>
        {
            lock (parts.Sync)
            {
                return parts.Committer.AwaitReservation(1);
            }
        }).WaitAsync(Limit);

        Assert.True(waited);
        lock (parts.Sync)
        {
            Assert.Equal(SequenceReservation.Step, parts.Reservation.Reserved);
        }

        Assert.Equal(SequenceReservation.Step, new SequenceReservation(parts.Disk, StoreParts.Msgs).Read());
        await parts.Committer.StopAsync().WaitAsync(Limit);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_closed_committer_refuses_waits_and_appends_waiting_for_a_reservation()
    {
        var parts = new StoreParts();
        Assert.True(parts.Committer.BeginClose());
        Assert.False(parts.Committer.BeginClose());
        await Assert.ThrowsAsync<ObjectDisposedException>(() => parts.Committer.WaitForDurableAsync(1, CancellationToken.None).AsTask());
        await parts.Committer.FlushAsync(CancellationToken.None);
        lock (parts.Sync)
        {
            Assert.True(parts.Committer.Closed);
            Assert.False(parts.Committer.AwaitReservation(1));
        }
    }
}
