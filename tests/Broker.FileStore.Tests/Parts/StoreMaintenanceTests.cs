using Broker.Storage.FileStore.Internal;

namespace Broker.FileStore.Tests.Parts;

/// <summary><see cref="StoreMaintenance"/>: what one tick does: expiry by age, the rebuild of suspect counters, compaction.</summary>
public sealed class StoreMaintenanceTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(10);

    [Fact]
    public void A_tick_rebuilds_suspect_subject_counters_and_expires_by_age()
    {
        var parts = new StoreParts();
        parts.Append("S.a", "1");
        parts.Append("S.b", "2");
        parts.Subjects.MarkSuspect();
        parts.Subjects.Clear();
        parts.Maintenance.Tick();
        Assert.Equal(2, parts.Subjects.Count);
        Assert.False(parts.Subjects.Suspect);
        Assert.Equal(2UL, parts.Ledger.Messages);

        parts.Config = parts.Config with { MaxAge = TimeSpan.FromMilliseconds(1) };
        Thread.Sleep(5);
        parts.Maintenance.Tick();
        Assert.Equal((0UL, 3UL), (parts.Ledger.Messages, parts.Ledger.First));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_tick_compacts_a_durable_sealed_block_that_is_mostly_removed()
    {
        var parts = new StoreParts(blockSize: 128 << 10);
        parts.Committer.Reserve(SequenceReservation.Step);
        parts.Committer.Start();
        var payload = new string('m', 400);
        ulong last = 0;
        while (parts.Blocks.Count < 2)
        {
            last = parts.Append("S." + (last % 2), payload);
        }

        var sealedBlock = parts.Blocks[0];
        lock (parts.Sync)
        {
            // Keep the first and the last message of the block, remove everything between.
            for (var s = sealedBlock.First + 1; s < sealedBlock.Last; s++)
            {
                Assert.True(parts.Ledger.RemoveLive(s, RemovalReason.Api));
            }
        }

        await parts.Committer.FlushAsync(CancellationToken.None).AsTask().WaitAsync(Limit);
        var before = sealedBlock.End;
        parts.Maintenance.Tick();
        lock (parts.Sync)
        {
            Assert.True(sealedBlock.End < before / 10, $"{sealedBlock.End} of {before} bytes left");
            Assert.Equal(sealedBlock.Last, parts.Blocks.NextLive(sealedBlock.First + 1));
        }

        // Subjects alternate S.0, S.1 from sequence 1.
        Assert.Equal("S.0", parts.SubjectOf(1));
        Assert.Equal(2UL, parts.Ledger.Messages - (last - sealedBlock.Last));
        await parts.Committer.StopAsync().WaitAsync(Limit);

        // The compacted file replaced the old one: a fresh load reads the same records.
        lock (parts.Sync)
        {
            sealedBlock.ReleaseCache();
            sealedBlock.CloseFile();
        }

        Assert.Equal("S.0", parts.SubjectOf(1));
        Assert.Equal("S." + ((sealedBlock.Last - 1) % 2), parts.SubjectOf(sealedBlock.Last));
    }
}
