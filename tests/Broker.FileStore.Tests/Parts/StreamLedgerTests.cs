using Broker.Abstractions;
using Broker.Storage.FileStore.Internal;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.FileStore.Tests.Parts;

/// <summary><see cref="StreamLedger"/>: the counters through appends and removals, the markers owed to the disk, the limits.</summary>
public sealed class StreamLedgerTests
{
    private static StoreParts Filled(int count, StreamStoreConfig? config = null)
    {
        var parts = new StoreParts(config: config);
        for (var i = 1; i <= count; i++)
        {
            parts.Append("S." + (i % 2 == 0 ? "even" : "odd"), "message-" + i);
        }

        return parts;
    }

    [Fact]
    public void Removing_the_first_owes_a_head_marker_and_an_interior_removal_writes_a_tombstone()
    {
        var parts = Filled(5);
        var ledger = parts.Ledger;
        var tail = parts.Blocks.Tail!;
        Assert.Equal((1UL, 5UL, 5UL), (ledger.First, ledger.Last, ledger.Messages));

        var end = tail.End;
        Assert.True(ledger.RemoveLive(1, RemovalReason.Api));
        Assert.Equal((2UL, 4UL), (ledger.First, ledger.Messages));
        Assert.True(ledger.HeadDirty);
        Assert.Equal(end, tail.End);

        Assert.True(ledger.RemoveLive(3, RemovalReason.Api));
        Assert.Equal(end + RecordFormat.Overhead, tail.End);
        Assert.Equal(1, tail.Markers);
        Assert.False(ledger.RemoveLive(3, RemovalReason.Api));

        // The commit round writes the head marker once.
        ledger.WriteHeadMarker();
        Assert.False(ledger.HeadDirty);
        Assert.Equal(end + (2 * RecordFormat.Overhead), tail.End);
        ledger.WriteHeadMarker();
        Assert.Equal(end + (2 * RecordFormat.Overhead), tail.End);
    }

    [Fact]
    public void Replayed_removals_write_nothing()
    {
        var parts = Filled(5);
        var end = parts.Blocks.Tail!.End;
        Assert.True(parts.Ledger.RemoveLive(1, RemovalReason.Replay));
        Assert.True(parts.Ledger.RemoveLive(3, RemovalReason.Replay));
        Assert.False(parts.Ledger.HeadDirty);
        Assert.Equal(end, parts.Blocks.Tail!.End);
        Assert.Equal((2UL, 3UL), (parts.Ledger.First, parts.Ledger.Messages));
    }

    [Fact]
    public void An_erase_zeroes_the_record_and_owes_a_rewrite_once_its_bytes_are_on_disk()
    {
        var parts = Filled(3);
        var tail = parts.Blocks.Tail!;
        tail.Flushed = tail.End;
        var offset = tail.OffsetOf(2);
        Assert.True(parts.Ledger.RemoveLive(2, RemovalReason.Erase));
        Assert.Equal(1, parts.Ledger.PendingRewrites);

        var rewrites = new List<(MessageBlock Block, long Offset, byte[] Bytes)>();
        parts.Ledger.TakeRewrites(rewrites);
        Assert.Equal(0, parts.Ledger.PendingRewrites);
        var (block, at, bytes) = Assert.Single(rewrites);
        Assert.Same(tail, block);
        Assert.Equal(offset, at);
        Assert.True(RecordFormat.TryRead(bytes, out var header));
        Assert.Equal(RecordKind.Erased, header.Kind);
        Assert.True(bytes.AsSpan(RecordFormat.HeaderSize, bytes.Length - RecordFormat.Overhead).IndexOfAnyExcept((byte)0) < 0);
    }

    [Fact]
    public void Truncate_removes_what_is_above_and_writes_its_marker_in_a_fresh_block()
    {
        var parts = Filled(10);
        var before = parts.Blocks.Tail!;
        parts.Ledger.Truncate(6);
        Assert.Equal((1UL, 6UL, 6UL), (parts.Ledger.First, parts.Ledger.Last, parts.Ledger.Messages));
        Assert.NotSame(before, parts.Blocks.Tail);
        Assert.True(before.Sealed);
        Assert.Equal(1, parts.Blocks.Tail!.Markers);
        Assert.Equal(0UL, parts.Blocks.NextLive(7));
        Assert.Equal(3UL, parts.Subjects[parts.Subjects.Find("S.even"u8)].Count);
        Assert.Equal(6UL, parts.Subjects[parts.Subjects.Find("S.even"u8)].Last);

        // Appends continue after it.
        Assert.Equal(7UL, parts.Append("S.odd", "after"));
    }

    [Fact]
    public void Skip_moves_the_last_sequence_and_an_empty_stream_starts_after_it()
    {
        var parts = new StoreParts();
        Assert.Equal(1UL, parts.Ledger.Skip());
        Assert.Equal(2UL, parts.Ledger.Skip());
        Assert.Equal((3UL, 2UL, 0UL), (parts.Ledger.First, parts.Ledger.Last, parts.Ledger.Messages));
        Assert.Equal(3UL, parts.Append("S.a", "x"));
        Assert.Equal(3UL, parts.Ledger.First);
    }

    [Fact]
    public void Discard_old_limits_remove_the_oldest_after_an_append()
    {
        var config = new StreamStoreConfig { Name = "S", MaxMessages = 3, MaxMessagesPerSubject = 1 };
        var parts = Filled(5, config);

        // Odd at 1, 3, 5 and even at 2, 4: per subject first (one each), then the stream.
        parts.Ledger.EnforceLimitsAfterAppend(config, "S.odd"u8);
        Assert.Equal((2UL, 3UL), (parts.Ledger.First, parts.Ledger.Messages));
        parts.Ledger.EnforceLimitsAfterAppend(config, "S.even"u8);
        Assert.Equal((4UL, 5UL, 2UL), (parts.Ledger.First, parts.Ledger.Last, parts.Ledger.Messages));

        config = config with { MaxMessagesPerSubject = 0, MaxMessages = 1 };
        parts.Ledger.EnforceStreamLimits(config);
        Assert.Equal((5UL, 1UL), (parts.Ledger.First, parts.Ledger.Messages));
    }

    [Fact]
    public void Discard_new_refuses_what_would_grow_the_stream_past_its_limits()
    {
        var config = new StreamStoreConfig { Name = "S", Discard = DiscardPolicy.New, MaxMessages = 2, MaxMessagesPerSubject = 1 };
        var parts = Filled(2, config);
        Assert.Equal(StoreStatus.MaxMessages, parts.Ledger.CheckDiscardNew(config, "S.other"u8, 10));

        // At its own per-subject limit an append replaces that subject's oldest: the stream does not grow.
        Assert.Equal(StoreStatus.Stored, parts.Ledger.CheckDiscardNew(config, "S.odd"u8, 10));
        Assert.Equal(StoreStatus.MaxMessagesPerSubject, parts.Ledger.CheckDiscardNew(config with { DiscardNewPerSubject = true }, "S.odd"u8, 10));
        Assert.Equal(StoreStatus.MaxBytes, parts.Ledger.CheckDiscardNew(config with { MaxBytes = 5 }, "S.odd"u8, 10));
    }

    [Fact]
    public void Max_age_expires_from_the_head()
    {
        var parts = Filled(4);
        Assert.False(parts.Ledger.ExpireByAge(new StreamStoreConfig { Name = "S" }));
        Assert.False(parts.Ledger.ExpireByAge(new StreamStoreConfig { Name = "S", MaxAge = TimeSpan.FromHours(1) }));
        Thread.Sleep(5);
        Assert.True(parts.Ledger.ExpireByAge(new StreamStoreConfig { Name = "S", MaxAge = TimeSpan.FromMilliseconds(1) }));
        Assert.Equal((0UL, 5UL), (parts.Ledger.Messages, parts.Ledger.First));
        Assert.True(parts.Ledger.HeadDirty);
    }
}
