using System.Text;
using System.Text.Json;
using Broker.Storage.FileStore;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Broker.JetStream.Tests.Sources;

/// <summary>Raw API requests and stream reads shared by the mirror and source tests (both servers answer the same subjects).</summary>
internal static class SourceTestKit
{
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    /// <summary>Our broker with the memory and the file store, or nats-server 2.9.10 with -js.</summary>
    public static Task<JetStreamServer> StartAsync(ServerKind kind) => JetStreamServer.StartAsync(kind, extraPlugins: [new FileStorePlugin()]);

    public static TheoryData<ServerKind, string> ServersAndStorage => new()
    {
        { ServerKind.Ours, "memory" },
        { ServerKind.Ours, "file" },
        { ServerKind.Reference, "memory" },
        { ServerKind.Reference, "file" },
    };

    /// <summary>A raw API request; the reply's JSON.</summary>
    public static async Task<JsonElement> RequestAsync(NatsConnection connection, string subject, string body)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(body), replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(10) });
        using var document = JsonDocument.Parse(reply.Data ?? []);
        return document.RootElement.Clone();
    }

    /// <summary>The <c>error</c> of a reply as (code, err_code, description); default when it has none.</summary>
    public static (int, int, string) Error(JsonElement reply) =>
        reply.TryGetProperty("error", out var error)
            ? (error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()!)
            : default;

    public static Task<JsonElement> InfoAsync(NatsConnection connection, string stream, string prefix = "$JS.API") =>
        RequestAsync(connection, $"{prefix}.STREAM.INFO.{stream}", "");

    /// <summary>Waits until the stream holds <paramref name="count"/> messages.</summary>
    public static Task WaitForMessagesAsync(NatsConnection connection, string stream, long count, TimeSpan? timeout = null) =>
        Eventually.AssertAsync(
            async () =>
            {
                var info = await InfoAsync(connection, stream);
                return info.TryGetProperty("state", out var state) && state.GetProperty("messages").GetInt64() == count;
            },
            $"stream {stream} holds {count} messages",
            timeout ?? TimeSpan.FromSeconds(20));

    /// <summary>Every message of the stream from its first to its last sequence: "seq subject payload [headers]".</summary>
    public static async Task<List<string>> MessagesAsync(NatsConnection connection, string stream)
    {
        var state = (await InfoAsync(connection, stream)).GetProperty("state");
        var messages = new List<string>();
        for (var sequence = state.GetProperty("first_seq").GetUInt64(); sequence <= state.GetProperty("last_seq").GetUInt64() && sequence > 0; sequence++)
        {
            var reply = await RequestAsync(connection, $"$JS.API.STREAM.MSG.GET.{stream}", $"{{\"seq\":{sequence}}}");
            if (!reply.TryGetProperty("message", out var message))
            {
                continue;
            }

            // nats-server omits an empty payload's "data".
            var data = message.TryGetProperty("data", out var body) ? Encoding.UTF8.GetString(Convert.FromBase64String(body.GetString() ?? "")) : "";
            var headers = message.TryGetProperty("hdrs", out var hdrs) ? " " + Encoding.UTF8.GetString(Convert.FromBase64String(hdrs.GetString()!)).Replace("\r\n", "|", StringComparison.Ordinal) : "";
            messages.Add($"{message.GetProperty("seq").GetUInt64()} {message.GetProperty("subject").GetString()} {data}{headers}");
        }

        return messages;
    }

    public static async Task PublishAsync(NatsJSContext js, string subject, string data, NatsHeaders? headers = null)
    {
        var ack = await js.PublishAsync(subject, data, headers: headers);
        ack.EnsureSuccess();
    }
}
