using System.Text.Json.Nodes;
using Broker.Storage.FileStore;
using NATS.Client.Core;

namespace Broker.JetStream.Tests.Snapshots;

/// <summary>
/// Our snapshots restored by our broker, through raw requests as <c>nats stream backup</c> / <c>restore</c> send them:
/// every message keeps its sequence, subject, headers, data and time, deleted sequences stay deleted, the first
/// sequence stays, and the durable consumer keeps its delivered and acknowledged positions; also from one storage type
/// into another, and a stream larger than the 8 MiB flow-control window in many chunks.
/// </summary>
public class SnapshotRoundTripTests
{
    [Theory(Timeout = 120_000)]
    [InlineData("memory", "memory")]
    [InlineData("file", "file")]
    [InlineData("memory", "file")]
    [InlineData("file", "memory")]
    public async Task A_snapshot_restores_every_message_and_the_consumer(string from, string to)
    {
        await using var server = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()]);
        await using var connection = server.Connect();
        await SnapshotKit.BuildAsync(connection, "S", from);
        var before = await SnapshotKit.DescribeAsync(connection, "S");

        var (response, archive, chunks) = await SnapshotKit.SnapshotAsync(connection, "S");
        Assert.Equal("io.nats.jetstream.api.v1.stream_snapshot_response", (string?)response["type"]);
        Assert.Equal(16, (int)response["state"]!["messages"]!);
        Assert.Equal("S", (string?)response["config"]!["name"]);
        Assert.True(chunks >= 1);

        await SnapshotKit.Ok(connection, "$JS.API.STREAM.DELETE.S");
        var (first, final) = await SnapshotKit.RestoreAsync(connection, "S", SnapshotKit.Config("S", to), archive, chunkSize: 1000);
        Assert.StartsWith("$JS.SNAPSHOT.RESTORE.S.", (string?)first["deliver_subject"]);
        Assert.Equal("io.nats.jetstream.api.v1.stream_create_response", (string?)final!["type"]);
        Assert.True(final["error"] is null, final.ToJsonString());
        Assert.Equal(to, (string?)final["config"]!["storage"]);

        Assert.Equal(before, await SnapshotKit.DescribeAsync(connection, "S"));

        // The restored consumer goes on where it was: the next pull gets the 6th message (sequence 9).
        Assert.Equal(9UL, await SnapshotKit.NextSequenceAsync(connection, "S", "C"));
    }

    [Fact(Timeout = 180_000)]
    public async Task A_stream_larger_than_the_window_goes_in_many_acknowledged_chunks()
    {
        await using var server = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()]);
        await using var connection = server.Connect();
        await SnapshotKit.BuildAsync(connection, "BIG", "file", messages: 2600, payloadSize: 4096);
        var before = await SnapshotKit.DescribeAsync(connection, "BIG");

        var (_, archive, chunks) = await SnapshotKit.SnapshotAsync(connection, "BIG", "\"chunk_size\":65536");
        Assert.True(archive.Length > 8 * 1024 * 1024, "the archive is larger than the window: " + archive.Length);
        Assert.Equal((archive.Length + 65535) / 65536, chunks);

        await SnapshotKit.Ok(connection, "$JS.API.STREAM.DELETE.BIG");
        var (_, final) = await SnapshotKit.RestoreAsync(connection, "BIG", SnapshotKit.Config("BIG", "memory"), archive, chunkSize: 128 * 1024);
        Assert.True(final!["error"] is null, final.ToJsonString());
        Assert.Equal(before, await SnapshotKit.DescribeAsync(connection, "BIG"));
    }

    [Fact(Timeout = 60_000)]
    public async Task No_consumers_leaves_them_out()
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();
        await SnapshotKit.BuildAsync(connection, "S", "memory");
        var (_, archive, _) = await SnapshotKit.SnapshotAsync(connection, "S", "\"no_consumers\":true");
        await SnapshotKit.Ok(connection, "$JS.API.STREAM.DELETE.S");
        var (_, final) = await SnapshotKit.RestoreAsync(connection, "S", SnapshotKit.Config("S", "memory"), archive);
        Assert.Equal(0, (int)final!["state"]!["consumer_count"]!);
        Assert.Equal(16, (int)final["state"]!["messages"]!);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_restore_under_another_name_fails_and_leaves_nothing()
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();
        await SnapshotKit.BuildAsync(connection, "S", "memory");
        var (_, archive, _) = await SnapshotKit.SnapshotAsync(connection, "S");
        var (_, final) = await SnapshotKit.RestoreAsync(connection, "T", "{\"name\":\"T\",\"subjects\":[\"t.>\"],\"storage\":\"memory\"}", archive);
        Assert.Equal("""{"code":500,"err_code":10062,"description":"restore failed: stream names do not match"}""", final!["error"]!.ToJsonString());
        Assert.Equal(404, (int)(await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.INFO.T"))["error"]!["code"]!);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_corrupt_archive_or_one_of_a_newer_format_fails_the_restore()
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();
        await SnapshotKit.BuildAsync(connection, "S", "memory");
        var (_, archive, _) = await SnapshotKit.SnapshotAsync(connection, "S");
        await SnapshotKit.Ok(connection, "$JS.API.STREAM.DELETE.S");

        // A flipped byte anywhere in the compressed data is not always a different archive (a copy's offset into a run
        // of the tar's zeros decodes to the same bytes), so each case corrupts what must be checked: the framing's
        // checksum, then the last live message's data inside an otherwise valid frame.
        var badFrame = archive.ToArray();
        badFrame[FirstDataChunkCrc] ^= 0x55;
        var (_, final) = await SnapshotKit.RestoreAsync(connection, "S", SnapshotKit.Config("S", "memory"), badFrame);
        Assert.Equal("""{"code":500,"err_code":10062,"description":"restore failed: snappy chunk checksum mismatch"}""", final!["error"]!.ToJsonString());
        Assert.Equal(404, (int)(await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.INFO.S"))["error"]!["code"]!);

        (_, final) = await SnapshotKit.RestoreAsync(connection, "S", SnapshotKit.Config("S", "memory"), WithLastMessageFlipped(archive));
        Assert.Equal("""{"code":500,"err_code":10062,"description":"restore failed: message 20 failed its checksum"}""", final!["error"]!.ToJsonString());
        Assert.Equal(404, (int)(await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.INFO.S"))["error"]!["code"]!);

        // nats-server 2.10's layout: blocks without their .idx (the state is in index.db).
        (_, final) = await SnapshotKit.RestoreAsync(connection, "S", SnapshotKit.Config("S", "memory"), NewerFormat());
        Assert.Equal("""{"code":500,"err_code":10062,"description":"restore failed: message block 1 has no index (a snapshot of nats-server 2.10 or later?)"}""", final!["error"]!.ToJsonString());
    }

    /// <summary>The stream identifier chunk (4 + 6 bytes), then the first data chunk's header (4): its checksum.</summary>
    private const int FirstDataChunkCrc = 14;

    /// <summary>The archive re-framed with the last payload byte of the last block's last record (sequence 20) flipped.</summary>
    private static byte[] WithLastMessageFlipped(byte[] archive)
    {
        using var output = new MemoryStream();
        using (var framed = new Broker.JetStream.Internal.Snapshots.SnappyFrameWriter(output))
        {
            using var tar = new System.Formats.Tar.TarWriter(framed, System.Formats.Tar.TarEntryFormat.Pax, leaveOpen: true);
            using var reader = new System.Formats.Tar.TarReader(new Broker.JetStream.Internal.Snapshots.S2FrameReader(new MemoryStream(archive)));
            while (reader.GetNextEntry() is { } entry)
            {
                using var content = new MemoryStream();
                entry.DataStream?.CopyTo(content);
                var bytes = content.ToArray();
                if (entry.Name == "msgs/1.blk")
                {
                    // A record ends with its 8-byte hash; the byte before it is the message's last.
                    bytes[^9] ^= 0x55;
                }

                Add(tar, entry.Name, bytes);
            }
        }

        return output.ToArray();
    }

    private static byte[] NewerFormat()
    {
        using var output = new MemoryStream();
        using (var framed = new Broker.JetStream.Internal.Snapshots.SnappyFrameWriter(output))
        {
            using var tar = new System.Formats.Tar.TarWriter(framed, System.Formats.Tar.TarEntryFormat.Pax, leaveOpen: true);
            Add(tar, "meta.inf", """{"Created":"2024-01-01T00:00:00Z","name":"S","subjects":["S.>"],"storage":"file"}"""u8.ToArray());
            Add(tar, "index.db", [1, 2, 3]);
            Add(tar, "msgs/1.blk", new byte[30]);
        }

        return output.ToArray();
    }

    private static void Add(System.Formats.Tar.TarWriter tar, string name, byte[] content)
    {
        using var data = new MemoryStream(content);
        tar.WriteEntry(new System.Formats.Tar.PaxTarEntry(System.Formats.Tar.TarEntryType.RegularFile, name) { DataStream = data });
    }
}
