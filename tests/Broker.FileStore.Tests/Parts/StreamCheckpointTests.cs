using Broker.Storage.FileStore.Internal;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.FileStore.Tests.Parts;

/// <summary><see cref="StreamCheckpoint"/>: what a checkpoint restores, when it is refused, and when one is due.</summary>
public sealed class StreamCheckpointTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(10);

    /// <summary>A stream over several blocks with removals at the head and inside, stopped cleanly (its checkpoint written).</summary>
    private static async Task<StoreParts> StoppedAsync()
    {
        var parts = new StoreParts(blockSize: 4096);
        parts.Committer.Reserve(SequenceReservation.Step);
        parts.Committer.Start();
        for (var i = 1; i <= 60; i++)
        {
            parts.Append("S." + (i % 3), new string('c', 200) + i);
        }

        lock (parts.Sync)
        {
            foreach (var sequence in new ulong[] { 1, 2, 3, 17, 40 })
            {
                Assert.True(parts.Ledger.RemoveLive(sequence, RemovalReason.Api));
            }
        }

        Assert.True(parts.Committer.BeginClose());
        await parts.Committer.StopAsync().WaitAsync(Limit);
        parts.Committer.CommitFinal();
        return parts;
    }

    [Fact(Timeout = 30_000)]
    public async Task A_checkpoint_restores_the_counters_the_blocks_and_the_subjects()
    {
        var parts = await StoppedAsync();
        var restored = new StoreParts(parts.Disk);
        Assert.True(restored.Checkpoint.TryLoad(restored.BlockIds()));

        var (ledger, again) = (parts.Ledger, restored.Ledger);
        Assert.Equal((ledger.First, ledger.Last, ledger.FirstTimestamp, ledger.LastTimestamp), (again.First, again.Last, again.FirstTimestamp, again.LastTimestamp));
        Assert.Equal((ledger.Messages, ledger.Bytes, ledger.Lost), (again.Messages, again.Bytes, again.Lost));
        Assert.Equal((55UL, 4UL, 60UL), (again.Messages, again.First, again.Last));
        Assert.True(restored.Blocks.NextBlockId > parts.Blocks[parts.Blocks.Count - 1].Id);
        Assert.Equal(parts.Blocks.Count, restored.Blocks.Count);
        for (var i = 0; i < parts.Blocks.Count; i++)
        {
            var (block, copy) = (parts.Blocks[i], restored.Blocks[i]);
            Assert.Equal((block.Id, block.First, block.Last, block.Messages, block.Bytes, block.End, block.Markers), (copy.Id, copy.First, copy.Last, copy.Messages, copy.Bytes, copy.End, copy.Markers));
            Assert.True(copy.Sealed);
            Assert.Equal(copy.End, copy.Synced);
        }

        Assert.Equal(18UL, restored.Blocks.NextLive(17));
        Assert.Equal(3, restored.Subjects.Count);
        foreach (var subject in new[] { "S.0", "S.1", "S.2" })
        {
            var (original, copy) = (parts.Subjects.Find(System.Text.Encoding.UTF8.GetBytes(subject)), restored.Subjects.Find(System.Text.Encoding.UTF8.GetBytes(subject)));
            Assert.Equal((parts.Subjects[original].Count, parts.Subjects[original].Last), (restored.Subjects[copy].Count, restored.Subjects[copy].Last));
            Assert.Equal(parts.Subjects.ResolveFirst(original), restored.Subjects.ResolveFirst(copy));
        }

        // The records it points at read back.
        Assert.Equal("S.1", restored.SubjectOf(4));
        Assert.Equal("S.0", restored.SubjectOf(60));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_checkpoint_naming_a_missing_block_is_refused_and_restores_nothing()
    {
        var parts = await StoppedAsync();
        var ids = parts.BlockIds();
        parts.Disk.DeleteFile(parts.Blocks.PathOf(ids[0]));
        var restored = new StoreParts(parts.Disk);
        Assert.False(restored.Checkpoint.TryLoad(restored.BlockIds()));
        Assert.Equal((0, 0UL, 0UL, 0), (restored.Blocks.Count, restored.Ledger.Last, restored.Ledger.Messages, restored.Subjects.Count));
    }

    [Fact]
    public void One_is_due_when_asked_for_or_the_block_layout_changed_and_at_most_once_a_second()
    {
        var parts = new StoreParts();
        var checkpoint = parts.Checkpoint;
        var now = Environment.TickCount64;
        Assert.False(checkpoint.Wanted);
        checkpoint.Request();
        Assert.True(checkpoint.Wanted);
        Assert.False(checkpoint.IsDue(now));
        Assert.True(checkpoint.IsDue(now + 1000));

        _ = checkpoint.Take(now + 1000);
        Assert.False(checkpoint.Wanted);
        Assert.False(checkpoint.IsDue(now + 5000));

        // Sealing a block wants one.
        parts.Append("S.a", "x");
        Assert.False(checkpoint.Wanted);
        parts.Blocks.NewTail(RecordFormat.Overhead, parts.Ledger.Last);
        Assert.True(checkpoint.Wanted);
        Assert.True(checkpoint.IsDue(now + 2000));
        Assert.True(checkpoint.IntervalElapsed(now + 61_000, TimeSpan.FromMinutes(1)));
    }
}
