using System.Text;
using System.Text.Json.Nodes;
using NATS.Client.Core;

namespace Broker.JetStream.Tests.Snapshots;

/// <summary>
/// Drives <c>$JS.API.STREAM.SNAPSHOT</c> and <c>RESTORE</c> with raw requests as jsm.go (<c>nats stream backup</c> /
/// <c>restore</c>) does, and builds and reads back a stream whose snapshot is worth checking: messages with and
/// without headers, a first sequence above 1, deleted messages inside, a durable consumer with acknowledged and
/// pending deliveries.
/// </summary>
internal static class SnapshotKit
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    public static async Task<JsonNode> ApiAsync(NatsConnection connection, string subject, string body = "")
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(body), replySerializer: NatsRawSerializer<byte[]>.Default, replyOpts: new NatsSubOpts { Timeout = Timeout });
        return JsonNode.Parse(reply.Data ?? [])!;
    }

    /// <summary>Takes a snapshot: the response, the archive and how many chunks carried it (each acknowledged).</summary>
    public static async Task<(JsonNode Response, byte[] Archive, int Chunks)> SnapshotAsync(NatsConnection connection, string stream, string options = "")
    {
        var inbox = "deliver." + Guid.NewGuid().ToString("N");
        await using var chunks = await connection.SubscribeCoreAsync<byte[]>(inbox, serializer: NatsRawSerializer<byte[]>.Default);
        var request = "{\"deliver_subject\":\"" + inbox + "\"" + (options.Length > 0 ? "," + options : "") + "}";
        var response = await ApiAsync(connection, "$JS.API.STREAM.SNAPSHOT." + stream, request);
        if (response["error"] is not null)
        {
            return (response, [], 0);
        }

        using var archive = new MemoryStream();
        var count = 0;
        using var cancel = new CancellationTokenSource(Timeout);
        await foreach (var chunk in chunks.Msgs.ReadAllAsync(cancel.Token))
        {
            if (chunk.Data is not { Length: > 0 } data)
            {
                break;
            }

            archive.Write(data);
            count++;
            if (chunk.ReplyTo is { } reply)
            {
                await connection.PublishAsync(reply, Array.Empty<byte>());
            }
        }

        return (response, archive.ToArray(), count);
    }

    /// <summary>Restores: the first response (with the deliver subject), then the chunks, then the final response.</summary>
    public static async Task<(JsonNode First, JsonNode? Final)> RestoreAsync(NatsConnection connection, string stream, string config, byte[] archive, int chunkSize = 64 * 1024, Func<Task>? beforeChunks = null)
    {
        var first = await ApiAsync(connection, "$JS.API.STREAM.RESTORE." + stream, "{\"config\":" + config + ",\"state\":{}}");
        if (first["error"] is not null)
        {
            return (first, null);
        }

        if (beforeChunks is not null)
        {
            await beforeChunks();
        }

        var deliver = (string)first["deliver_subject"]!;
        for (var at = 0; at < archive.Length; at += chunkSize)
        {
            var chunk = archive.AsSpan(at, Math.Min(chunkSize, archive.Length - at)).ToArray();
            var ack = await connection.RequestAsync<byte[], byte[]>(deliver, chunk, replySerializer: NatsRawSerializer<byte[]>.Default, replyOpts: new NatsSubOpts { Timeout = Timeout });
            Assert.True(ack.Data is null or { Length: 0 }, "a chunk is acknowledged with an empty message");
        }

        var final = await connection.RequestAsync<byte[], byte[]>(deliver, Array.Empty<byte>(), replySerializer: NatsRawSerializer<byte[]>.Default, replyOpts: new NatsSubOpts { Timeout = Timeout });
        return (first, JsonNode.Parse(final.Data ?? [])!);
    }

    /// <summary>
    /// Stream <paramref name="name"/> on <c>&lt;name&gt;.&gt;</c>: 20 messages (every third with a header), sequences 1-2
    /// purged, 7 and 11 deleted; durable pull consumer <c>C</c> (explicit ack) got 5 and acknowledged the first 2 and the 4th.
    /// </summary>
    /// <param name="connection">The connection.</param>
    /// <param name="name">The stream's name.</param>
    /// <param name="storage">Its storage type.</param>
    /// <param name="messages">How many messages to publish.</param>
    /// <param name="payloadSize">Their size.</param>
    /// <param name="compressible">Whether payloads repeat themselves (random otherwise).</param>
    public static async Task BuildAsync(NatsConnection connection, string name, string storage, int messages = 20, int payloadSize = 8, bool compressible = false)
    {
        await Ok(connection, "$JS.API.STREAM.CREATE." + name, Config(name, storage));
        for (var i = 1; i <= messages; i++)
        {
            var headers = i % 3 == 0 ? new NatsHeaders { ["X-Index"] = i.ToString(System.Globalization.CultureInfo.InvariantCulture) } : null;
            var payload = new byte[payloadSize];
            Random.Shared.NextBytes(payload);
            if (compressible)
            {
                // A random word repeated: S2 finds matches (and repeat offsets) in it.
                for (var at = 8; at < payload.Length; at++)
                {
                    payload[at] = payload[at % 8];
                }
            }
            var ack = await connection.RequestAsync<byte[], byte[]>(name + ".s" + (i % 4), payload, headers: headers, replySerializer: NatsRawSerializer<byte[]>.Default);
            Assert.Contains("\"seq\"", Encoding.UTF8.GetString(ack.Data!));
        }

        await Ok(connection, "$JS.API.STREAM.PURGE." + name, """{"seq":3}""");
        await Ok(connection, "$JS.API.STREAM.MSG.DELETE." + name, """{"seq":7}""");
        await Ok(connection, "$JS.API.STREAM.MSG.DELETE." + name, """{"seq":11}""");
        await Ok(connection, "$JS.API.CONSUMER.DURABLE.CREATE." + name + ".C", "{\"stream_name\":\"" + name + "\",\"config\":{\"durable_name\":\"C\",\"ack_policy\":\"explicit\",\"ack_wait\":60000000000}}");
        var inbox = "deliver." + Guid.NewGuid().ToString("N");
        await using var deliveries = await connection.SubscribeCoreAsync<byte[]>(inbox, serializer: NatsRawSerializer<byte[]>.Default);
        await connection.PublishAsync("$JS.API.CONSUMER.MSG.NEXT." + name + ".C", """{"batch":5}"""u8.ToArray(), replyTo: inbox);
        var got = 0;
        using var cancel = new CancellationTokenSource(Timeout);
        await foreach (var delivery in deliveries.Msgs.ReadAllAsync(cancel.Token))
        {
            got++;
            if (got is 1 or 2 or 4)
            {
                await connection.PublishAsync(delivery.ReplyTo!, "+ACK"u8.ToArray());
            }

            if (got == 5)
            {
                break;
            }
        }

        // The acknowledgements are in once the consumer says so.
        await Eventually(async () => (int?)(await ApiAsync(connection, "$JS.API.CONSUMER.INFO." + name + ".C"))["num_ack_pending"] == 2);
    }

    /// <summary>Pulls one message of a consumer and returns its stream sequence (from its acknowledgement subject).</summary>
    public static async Task<ulong> NextSequenceAsync(NatsConnection connection, string stream, string consumer)
    {
        var inbox = "deliver." + Guid.NewGuid().ToString("N");
        await using var deliveries = await connection.SubscribeCoreAsync<byte[]>(inbox, serializer: NatsRawSerializer<byte[]>.Default);
        await connection.PublishAsync("$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer, """{"batch":1}"""u8.ToArray(), replyTo: inbox);
        using var cancel = new CancellationTokenSource(Timeout);
        await foreach (var delivery in deliveries.Msgs.ReadAllAsync(cancel.Token))
        {
            // $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>
            return ulong.Parse(delivery.ReplyTo!.Split('.')[5], System.Globalization.CultureInfo.InvariantCulture);
        }

        throw new InvalidOperationException("no message");
    }

    public static string Config(string name, string storage) => "{\"name\":\"" + name + "\",\"subjects\":[\"" + name + ".>\"],\"storage\":\"" + storage + "\"}";

    /// <summary>What a snapshot must keep: every message (sequence, subject, headers, data, time), the state, the consumer's positions.</summary>
    public static async Task<string> DescribeAsync(NatsConnection connection, string name, bool withTimes = true)
    {
        var info = await ApiAsync(connection, "$JS.API.STREAM.INFO." + name);
        var state = info["state"]!;
        var text = new StringBuilder();
        text.Append("messages=").Append(state["messages"]).Append(" first=").Append(state["first_seq"]).Append(" last=").Append(state["last_seq"])
            .Append(" deleted=").Append(state["num_deleted"]).Append(" consumers=").Append(state["consumer_count"]).AppendLine();
        for (var seq = (ulong)state["first_seq"]!; seq <= (ulong)state["last_seq"]!; seq++)
        {
            var got = await ApiAsync(connection, "$JS.API.STREAM.MSG.GET." + name, "{\"seq\":" + seq + "}");
            if (got["message"] is not { } message)
            {
                text.Append(seq).AppendLine(" -");
                continue;
            }

            text.Append(message["seq"]).Append(' ').Append(message["subject"]).Append(" hdrs=").Append(message["hdrs"]).Append(" data=").Append(message["data"]);
            if (withTimes)
            {
                text.Append(" time=").Append(message["time"]);
            }

            text.AppendLine();
        }

        foreach (var consumer in ((JsonArray?)(await ApiAsync(connection, "$JS.API.CONSUMER.NAMES." + name))["consumers"]) ?? [])
        {
            var c = await ApiAsync(connection, "$JS.API.CONSUMER.INFO." + name + "." + consumer);
            text.Append("consumer ").Append(c["name"]).Append(" ack_policy=").Append(c["config"]!["ack_policy"])
                .Append(" delivered=").Append(c["delivered"]!["consumer_seq"]).Append('/').Append(c["delivered"]!["stream_seq"])
                .Append(" ack_floor=").Append(c["ack_floor"]!["consumer_seq"]).Append('/').Append(c["ack_floor"]!["stream_seq"])
                .Append(" ack_pending=").Append(c["num_ack_pending"]).Append(" pending=").Append(c["num_pending"]).AppendLine();
        }

        return text.ToString();
    }

    public static async Task Ok(NatsConnection connection, string subject, string body = "")
    {
        var reply = await ApiAsync(connection, subject, body);
        Assert.True(reply["error"] is null, subject + ": " + reply.ToJsonString());
    }

    public static async Task Eventually(Func<Task<bool>> condition)
    {
        var deadline = DateTime.UtcNow + Timeout;
        while (!await condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "condition not met in time");
            await Task.Delay(20);
        }
    }
}
