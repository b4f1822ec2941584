using System.Text.Json.Nodes;
using Broker.Storage.FileStore;

namespace Broker.JetStream.Tests.Snapshots;

/// <summary>
/// The snapshot and restore requests' answers compared with nats-server 2.9.10's, byte for byte: refusals (a bad
/// request, invalid JSON, a missing stream, an invalid deliver subject, a restore onto an existing stream) and the
/// first answer of a restore; and the four advisories, their fields in nats-server's order.
/// </summary>
public class SnapshotApiTests
{
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Kinds))]
    public async Task Refusals_are_nats_servers(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind, extraPlugins: [new FileStorePlugin()]);
        await using var connection = server.Connect();
        await SnapshotKit.Ok(connection, "$JS.API.STREAM.CREATE.S", SnapshotKit.Config("S", "file"));
        string[] expected =
        [
            """{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":400,"err_code":10003,"description":"bad request"}}""",
            """{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}""",
            """{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":400,"err_code":10025,"description":"invalid JSON"}}""",
            """{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":400,"err_code":10015,"description":"deliver subject not valid"}}""",
            """{"type":"io.nats.jetstream.api.v1.stream_restore_response","error":{"code":400,"err_code":10003,"description":"bad request"},"deliver_subject":""}""",
            """{"type":"io.nats.jetstream.api.v1.stream_restore_response","error":{"code":400,"err_code":10025,"description":"invalid JSON"},"deliver_subject":""}""",
            """{"type":"io.nats.jetstream.api.v1.stream_restore_response","error":{"code":400,"err_code":10130,"description":"stream name already in use, cannot restore"},"deliver_subject":""}""",
        ];
        string[] actual =
        [
            (await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.SNAPSHOT.S")).ToJsonString(),
            (await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.SNAPSHOT.NOPE", """{"deliver_subject":"d"}""")).ToJsonString(),
            (await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.SNAPSHOT.S", "{bad")).ToJsonString(),
            (await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.SNAPSHOT.S", """{"deliver_subject":""}""")).ToJsonString(),
            (await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.RESTORE.S")).ToJsonString(),
            (await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.RESTORE.S", "{bad")).ToJsonString(),
            (await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.RESTORE.S", "{\"config\":" + SnapshotKit.Config("S", "file") + "}")).ToJsonString(),
        ];
        Assert.Equal(expected, actual);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Kinds))]
    public async Task A_stream_created_during_the_transfer_fails_the_restore(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind, extraPlugins: [new FileStorePlugin()]);
        await using var connection = server.Connect();
        await SnapshotKit.Ok(connection, "$JS.API.STREAM.CREATE.S", SnapshotKit.Config("S", "file"));
        await connection.PublishAsync("S.a", "one");
        var (_, archive, _) = await SnapshotKit.SnapshotAsync(connection, "S");
        await SnapshotKit.Ok(connection, "$JS.API.STREAM.DELETE.S");

        var (_, final) = await SnapshotKit.RestoreAsync(connection, "S", SnapshotKit.Config("S", "file"), archive, beforeChunks: () => SnapshotKit.Ok(connection, "$JS.API.STREAM.CREATE.S", SnapshotKit.Config("S", "file")));
        Assert.Equal(
            """{"type":"io.nats.jetstream.api.v1.stream_create_response","error":{"code":400,"err_code":10130,"description":"stream name already in use, cannot restore"}}""",
            final!.ToJsonString());
        Assert.Equal(0, (int)(await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.INFO.S"))["state"]!["messages"]!);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Kinds))]
    public async Task The_advisories_frame_a_snapshot_and_a_restore(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind, extraPlugins: [new FileStorePlugin()]);
        await using var connection = server.Connect();
        await using var events = await connection.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.STREAM.>");
        await connection.PingAsync();
        await SnapshotKit.Ok(connection, "$JS.API.STREAM.CREATE.S", SnapshotKit.Config("S", "file"));
        await connection.PublishAsync("S.a", "one");
        var (_, archive, _) = await SnapshotKit.SnapshotAsync(connection, "S");
        await SnapshotKit.Ok(connection, "$JS.API.STREAM.DELETE.S");
        var (_, final) = await SnapshotKit.RestoreAsync(connection, "S", SnapshotKit.Config("S", "file"), archive);
        Assert.True(final!["error"] is null, final.ToJsonString());

        var seen = new List<string>();
        using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        await foreach (var message in events.Msgs.ReadAllAsync(cancel.Token))
        {
            if (message.Subject.Contains("SNAPSHOT", StringComparison.Ordinal) || message.Subject.Contains("RESTORE", StringComparison.Ordinal))
            {
                var body = JsonNode.Parse(message.Data!)!.AsObject();
                seen.Add(message.Subject + " " + (string?)body["type"] + " " + string.Join(",", body.Select(p => p.Key)));
            }

            if (seen.Count == 4)
            {
                break;
            }
        }

        Assert.Equal(
            [
                "$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_CREATE.S io.nats.jetstream.advisory.v1.snapshot_create type,id,timestamp,stream,state,client",
                "$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_COMPLETE.S io.nats.jetstream.advisory.v1.snapshot_complete type,id,timestamp,stream,start,end,client",
                "$JS.EVENT.ADVISORY.STREAM.RESTORE_CREATE.S io.nats.jetstream.advisory.v1.restore_create type,id,timestamp,stream,client",
                "$JS.EVENT.ADVISORY.STREAM.RESTORE_COMPLETE.S io.nats.jetstream.advisory.v1.restore_complete type,id,timestamp,stream,start,end,bytes,client",
            ],
            seen);
    }
}
