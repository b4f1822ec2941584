using System.Text;
using Broker.Abstractions;
using Broker.Storage.FileStore;
using static Broker.FileStore.Tests.StoreFixture;

namespace Broker.FileStore.Tests;

/// <summary>
/// Damaged files on a real directory, as a crash or a failing disk leaves them: a truncated last record, a garbage
/// tail, a missing or corrupt checkpoint, a flipped byte in a checksummed record. Recovery keeps every intact record,
/// never serves a damaged one, and never hands out a sequence again.
/// </summary>
public sealed class TornWriteTests : IDisposable
{
    private readonly StoreFixture fixture = new(new FileStoreOptions { BlockSize = 4096 });

    public void Dispose() => fixture.Dispose();

    private string Msgs => Path.Combine(fixture.StreamDirectory("S"), "msgs");

    private string[] Blocks() => [.. Directory.GetFiles(Msgs, "*.blk").OrderBy(f => int.Parse(Path.GetFileNameWithoutExtension(f), System.Globalization.CultureInfo.InvariantCulture))];

    private async Task FillAsync(int count = 100)
    {
        await using var store = await fixture.CreateAsync();
        for (var i = 1; i < count; i++)
        {
            Put(store, "S." + (i % 4), "message-" + i);
        }

        store.Remove(7);
        Put(store, "S." + (count % 4), "message-" + count);
        await store.FlushAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task A_truncated_last_record_is_cut_and_its_sequence_not_reused()
    {
        await FillAsync();
        // Cut the file in the middle of the last record, as a crash during its write would.
        var last = Blocks()[^1];
        var at = File.ReadAllBytes(last).AsSpan().IndexOf(Encoding.UTF8.GetBytes("message-100"));
        using (var file = File.Open(last, FileMode.Open))
        {
            file.SetLength(at + 4);
        }

        await using var store = await fixture.ReopenAsync();
        var state = store.GetState();
        Assert.Equal(98UL, state.Messages);
        Assert.Null(Get(store, 100));
        Assert.Equal("message-99", Get(store, 99)!.Value.Payload);
        Assert.Null(Get(store, 7));
        Assert.Equal(101UL, Put(store, "S.x", "next").Sequence);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_garbage_tail_is_cut_off()
    {
        await FillAsync();
        var last = Blocks()[^1];
        var length = new FileInfo(last).Length;
        var garbage = new byte[3000];
        new Random(5).NextBytes(garbage);
        await using (var file = File.Open(last, FileMode.Append))
        {
            file.Write(garbage);
        }

        await using var store = await fixture.ReopenAsync();
        Assert.Equal(99UL, store.GetState().Messages);
        Assert.Equal("message-100", Get(store, 100)!.Value.Payload);
        Assert.True(new FileInfo(last).Length <= length, "the garbage is still in the file");
        Assert.Equal(101UL, Put(store, "S.x", "next").Sequence);
        await store.FlushAsync();
        Assert.Equal("next", Get(store, 101)!.Value.Payload);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_missing_checkpoint_is_rebuilt_from_the_blocks()
    {
        await FillAsync();
        StreamState before;
        IReadOnlyDictionary<string, SubjectState> subjects;
        await using (var store = await fixture.ReopenAsync())
        {
            before = store.GetState();
            subjects = store.GetSubjectsState(">");
        }

        File.Delete(Path.Combine(Msgs, "index.db"));
        await using var rebuilt = await fixture.ReopenAsync();
        Assert.Equal(before, rebuilt.GetState());
        Assert.Equal(subjects, rebuilt.GetSubjectsState(">"));
        Assert.Equal([7UL], rebuilt.GetDeletedSequences());
        for (ulong i = 1; i <= 100; i++)
        {
            Assert.Equal(i == 7 ? null : "message-" + i, Get(rebuilt, i)?.Payload);
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task A_corrupt_checkpoint_is_rejected_and_rebuilt()
    {
        await FillAsync();
        var index = Path.Combine(Msgs, "index.db");
        var bytes = File.ReadAllBytes(index);
        bytes[bytes.Length / 2] ^= 0x40;
        File.WriteAllBytes(index, bytes);

        await using var store = await fixture.ReopenAsync();
        Assert.Equal(99UL, store.GetState().Messages);
        Assert.Equal("message-42", Get(store, 42)!.Value.Payload);
    }

    [Theory(Timeout = 30_000)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_flipped_byte_loses_only_that_record_and_it_is_never_served(bool withCheckpoint)
    {
        await FillAsync();
        if (!withCheckpoint)
        {
            File.Delete(Path.Combine(Msgs, "index.db"));
        }

        // Flip one payload byte of "message-20" in its (sealed) block.
        var target = Encoding.UTF8.GetBytes("message-20");
        var block = Blocks().First(b => File.ReadAllBytes(b).AsSpan().IndexOf(target) >= 0);
        Assert.NotEqual(Blocks()[^1], block);
        var bytes = File.ReadAllBytes(block);
        var at = bytes.AsSpan().IndexOf(target);
        bytes[at + 9] ^= 0x01;
        File.WriteAllBytes(block, bytes);

        await using var store = await fixture.ReopenAsync();
        Assert.Null(Get(store, 20));
        for (ulong i = 1; i <= 100; i++)
        {
            if (i is not 7 and not 20)
            {
                Assert.Equal("message-" + i, Get(store, i)!.Value.Payload);
            }
        }

        Assert.Equal(98UL, store.GetState().Messages);
        Assert.Equal(101UL, Put(store, "S.x", "next").Sequence);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_stream_whose_metadata_is_corrupt_is_skipped_and_others_recover()
    {
        await FillAsync();
        await using (var other = await fixture.CreateAsync("T"))
        {
            Put(other, "T.a", "kept");
            await other.FlushAsync();
        }

        var meta = Path.Combine(fixture.StreamDirectory("S"), "meta.inf");
        var bytes = File.ReadAllBytes(meta);
        bytes[10] ^= 0xFF;
        File.WriteAllBytes(meta, bytes);

        var stores = await fixture.Provider().RecoverAsync(new StoreRecoveryContext("$G", fixture.StreamsDirectory));
        var only = Assert.Single(stores);
        Assert.Equal("T", only.Config.Name);
        Assert.Equal("kept", Get(only, 1)!.Value.Payload);
        await only.DisposeAsync();
    }
}
