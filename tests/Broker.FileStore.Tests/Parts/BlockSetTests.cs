using Broker.Abstractions;
using Broker.Storage.FileStore;
using Broker.Storage.FileStore.Internal;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.FileStore.Tests.Parts;

/// <summary><see cref="BlockSet"/>: rotation of the tail, lookup by sequence, live scans, the graveyard, the block size.</summary>
public sealed class BlockSetTests
{
    private static readonly string Payload = new('p', 300);

    [Fact]
    public void Appends_roll_to_a_new_tail_when_the_block_is_full_and_every_sequence_is_found_in_its_block()
    {
        var parts = new StoreParts(blockSize: 4096);
        for (var i = 1; i <= 40; i++)
        {
            Assert.Equal((ulong)i, parts.Append("S.a", Payload));
        }

        var blocks = parts.Blocks;
        Assert.True(blocks.Count >= 3, $"{blocks.Count} blocks");
        for (var i = 0; i < blocks.Count; i++)
        {
            Assert.True(blocks[i].End <= 4096);
            Assert.Equal(i < blocks.Count - 1, blocks[i].Sealed);
            Assert.True(i == 0 || blocks[i].First == blocks[i - 1].Last + 1);
        }

        Assert.Same(blocks[blocks.Count - 1], blocks.Tail);
        for (ulong s = 1; s <= 40; s++)
        {
            var index = blocks.FindIndex(s);
            Assert.True(blocks[index].InRange(s));
            Assert.Same(blocks[index], blocks.Find(s));
        }

        Assert.Equal(-1, blocks.FindIndex(41));
        Assert.Null(blocks.Find(0));

        // A sealed block wants a checkpoint; the tail's file is created by the next round, which fsyncs the directory.
        Assert.True(blocks.ChangedSinceCheckpoint);
        Assert.True(blocks.TakeNewFiles());
        Assert.False(blocks.TakeNewFiles());
    }

    [Fact]
    public void Live_scans_skip_removed_messages_across_blocks()
    {
        var parts = new StoreParts(blockSize: 4096);
        for (var i = 1; i <= 30; i++)
        {
            parts.Append("S.a", Payload);
        }

        // Remove a whole interior run spanning a block boundary, and one more.
        var boundary = parts.Blocks[0].Last;
        for (var s = boundary - 2; s <= boundary + 2; s++)
        {
            Assert.True(parts.Ledger.RemoveLive(s, RemovalReason.Api));
        }

        Assert.True(parts.Ledger.RemoveLive(20, RemovalReason.Api));
        var blocks = parts.Blocks;
        Assert.Equal(boundary + 3, blocks.NextLive(boundary - 2));
        Assert.Equal(boundary - 3, blocks.PreviousLive(boundary + 2));
        Assert.Equal(21UL, blocks.NextLive(20));
        Assert.Equal(0UL, blocks.NextLive(31));
        Assert.Equal(new[] { boundary - 2, boundary - 1, boundary, boundary + 1, boundary + 2, 20UL }, blocks.NotLiveBetween(1, 30));
        Assert.Equal(new SubjectState(30 - 6 - (boundary - 3), boundary + 3, 30), blocks.LiveFrom(boundary - 2));
    }

    [Fact]
    public void Blocks_wholly_below_the_first_go_to_the_graveyard_until_buried()
    {
        var parts = new StoreParts(blockSize: 4096);
        for (var i = 1; i <= 30; i++)
        {
            parts.Append("S.a", Payload);
        }

        var firstBlock = parts.Blocks[0];
        var count = parts.Blocks.Count;
        Assert.False(parts.Blocks.HasBuried);
        while (parts.Ledger.First <= firstBlock.Last)
        {
            Assert.True(parts.Ledger.RemoveLive(parts.Ledger.First, RemovalReason.Limit));
        }

        Assert.Equal(count - 1, parts.Blocks.Count);
        Assert.False(parts.Blocks.Contains(firstBlock));
        Assert.True(parts.Blocks.HasBuried);
        var buried = parts.Blocks.TakeBuried();
        Assert.Equal(new[] { firstBlock }, buried);
        parts.Blocks.Buried(buried);
        Assert.False(parts.Blocks.HasBuried);
        Assert.Empty(parts.Blocks.TakeBuried());
    }

    [Fact]
    public void A_block_object_prepared_ahead_becomes_the_next_tail_and_its_id_is_the_next_a_checkpoint_records()
    {
        var parts = new StoreParts(blockSize: 4096);
        parts.Append("S.a", Payload);
        var tail = parts.Blocks.Tail!;
        Assert.Equal(tail.Id + 1, parts.Blocks.NextIdForCheckpoint);
        parts.Blocks.PrepareSpare();
        Assert.Equal(tail.Id + 1, parts.Blocks.NextIdForCheckpoint);
        Assert.Equal(tail.Id + 2, parts.Blocks.NextBlockId);

        var next = parts.Blocks.NewTail(RecordFormat.Overhead, parts.Ledger.Last);
        Assert.Equal(tail.Id + 1, next.Id);
        Assert.True(tail.Sealed);
        Assert.Equal(parts.Ledger.Last + 1, next.First);
        Assert.False(next.HasMessages);
    }

    [Fact]
    public void The_block_size_follows_nats_server_defaults()
    {
        var limits = new StreamStoreConfig { Name = "S" };
        Assert.Equal(8L << 20, BlockSet.ChooseSize(new FileStoreOptions(), limits, encrypted: false));
        Assert.Equal(2L << 20, BlockSet.ChooseSize(new FileStoreOptions(), limits, encrypted: true));
        Assert.Equal(4L << 20, BlockSet.ChooseSize(new FileStoreOptions(), limits with { MaxMessagesPerSubject = 1 }, encrypted: false));
        Assert.Equal(4L << 20, BlockSet.ChooseSize(new FileStoreOptions(), limits with { Retention = RetentionPolicy.WorkQueue }, encrypted: false));
        Assert.Equal(32L << 10, BlockSet.ChooseSize(new FileStoreOptions(), limits with { MaxBytes = 1000 }, encrypted: false));
        Assert.Equal(8L << 20, BlockSet.ChooseSize(new FileStoreOptions(), limits with { MaxBytes = 1L << 40 }, encrypted: false));
        Assert.Equal(4096, BlockSet.ChooseSize(new FileStoreOptions { BlockSize = 4096 }, limits, encrypted: true));
    }
}
