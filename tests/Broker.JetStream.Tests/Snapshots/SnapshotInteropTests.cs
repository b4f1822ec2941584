using Broker.Storage.FileStore;

namespace Broker.JetStream.Tests.Snapshots;

/// <summary>
/// Snapshots crossing between our broker and nats-server 2.9.10, both ways, through the same raw protocol: every
/// message (sequence, subject, headers, data, time), the first and deleted sequences and the durable consumer's
/// positions come out as they went in. nats-server 2.9.10 snapshots file streams only (its memory store answers
/// "no impl"); ours come from either storage type.
/// </summary>
public class SnapshotInteropTests
{
    [Theory(Timeout = 120_000)]
    [InlineData("memory")]
    [InlineData("file")]
    public async Task Our_snapshot_restores_in_nats_server(string storage)
    {
        await using var ours = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()]);
        await using var ourConnection = ours.Connect();
        await SnapshotKit.BuildAsync(ourConnection, "S", storage);
        var before = await SnapshotKit.DescribeAsync(ourConnection, "S");
        var (_, archive, _) = await SnapshotKit.SnapshotAsync(ourConnection, "S");

        await using var reference = await JetStreamServer.StartAsync(ServerKind.Reference);
        await using var referenceConnection = reference.Connect();
        var (_, final) = await SnapshotKit.RestoreAsync(referenceConnection, "S", SnapshotKit.Config("S", "file"), archive);
        Assert.True(final!["error"] is null, final.ToJsonString());
        Assert.Equal(before, await SnapshotKit.DescribeAsync(referenceConnection, "S"));
        Assert.Equal(9UL, await SnapshotKit.NextSequenceAsync(referenceConnection, "S", "C"));
    }

    [Theory(Timeout = 120_000)]
    [InlineData("memory")]
    [InlineData("file")]
    public async Task A_nats_server_snapshot_restores_here(string storage)
    {
        await using var reference = await JetStreamServer.StartAsync(ServerKind.Reference);
        await using var referenceConnection = reference.Connect();
        await SnapshotKit.BuildAsync(referenceConnection, "S", "file");
        var before = await SnapshotKit.DescribeAsync(referenceConnection, "S");
        var (_, archive, _) = await SnapshotKit.SnapshotAsync(referenceConnection, "S");

        await using var ours = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()]);
        await using var ourConnection = ours.Connect();
        var (_, final) = await SnapshotKit.RestoreAsync(ourConnection, "S", SnapshotKit.Config("S", storage), archive);
        Assert.True(final!["error"] is null, final.ToJsonString());
        Assert.Equal(before, await SnapshotKit.DescribeAsync(ourConnection, "S"));
        Assert.Equal(9UL, await SnapshotKit.NextSequenceAsync(ourConnection, "S", "C"));
    }

    [Fact(Timeout = 180_000)]
    public async Task A_large_snapshot_of_ours_in_several_blocks_restores_in_nats_server()
    {
        await using var ours = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()]);
        await using var ourConnection = ours.Connect();
        await SnapshotKit.BuildAsync(ourConnection, "BIG", "file", messages: 2600, payloadSize: 4096);
        var before = await SnapshotKit.DescribeAsync(ourConnection, "BIG");
        var (_, archive, _) = await SnapshotKit.SnapshotAsync(ourConnection, "BIG");

        await using var reference = await JetStreamServer.StartAsync(ServerKind.Reference);
        await using var referenceConnection = reference.Connect();
        var (_, final) = await SnapshotKit.RestoreAsync(referenceConnection, "BIG", SnapshotKit.Config("BIG", "file"), archive, chunkSize: 128 * 1024);
        Assert.True(final!["error"] is null, final.ToJsonString());
        Assert.Equal(before, await SnapshotKit.DescribeAsync(referenceConnection, "BIG"));
    }

    [Fact(Timeout = 180_000)]
    public async Task A_large_nats_server_snapshot_restores_here()
    {
        // Compressible payloads: nats-server's S2 writer compresses them (matches, repeat offsets) in its 1 MiB chunks.
        await using var reference = await JetStreamServer.StartAsync(ServerKind.Reference);
        await using var referenceConnection = reference.Connect();
        await SnapshotKit.BuildAsync(referenceConnection, "BIG", "file", messages: 1500, payloadSize: 4096, compressible: true);
        var before = await SnapshotKit.DescribeAsync(referenceConnection, "BIG");
        var (_, archive, chunks) = await SnapshotKit.SnapshotAsync(referenceConnection, "BIG");
        Assert.True(chunks > 1, "chunks: " + chunks);
        Assert.Equal("S2sTwO"u8.ToArray(), archive.AsSpan(4, 6).ToArray());
        Assert.Contains(ChunkTypes(archive), type => type == 0x00);

        await using var ours = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()]);
        await using var ourConnection = ours.Connect();
        var (_, final) = await SnapshotKit.RestoreAsync(ourConnection, "BIG", SnapshotKit.Config("BIG", "file"), archive);
        Assert.True(final!["error"] is null, final.ToJsonString());
        Assert.Equal(before, await SnapshotKit.DescribeAsync(ourConnection, "BIG"));
    }

    /// <summary>The types of a framed stream's chunks.</summary>
    private static List<byte> ChunkTypes(byte[] framed)
    {
        var types = new List<byte>();
        for (var at = 0; at + 4 <= framed.Length; at += 4 + (framed[at + 1] | (framed[at + 2] << 8) | (framed[at + 3] << 16)))
        {
            types.Add(framed[at]);
        }

        return types;
    }
}
