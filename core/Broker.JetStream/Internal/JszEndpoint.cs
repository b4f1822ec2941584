using System.Globalization;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal;

/// <summary>
/// <c>/jsz</c> (nats-server <c>HandleJsz</c>, 2.9 fields): configuration, usage, API counters and totals; with
/// <c>accounts</c>, <c>streams</c>, <c>consumers</c> and <c>config</c> the account, stream and consumer details. Indented
/// JSON as nats-server's <c>MarshalIndent</c>.
/// </summary>
internal sealed class JszEndpoint(JetStreamEngine engine, ServerIdentity? identity = null) : IMonitoringEndpoint
{
    public string Path => "/jsz";

    public string Title => "JetStream";

    public MonitoringResponse Handle(IReadOnlyDictionary<string, string> query)
    {
        bool accounts, streams, consumers, config;
        int offset, limit;
        try
        {
            accounts = Bool(query, "accounts");
            streams = Bool(query, "streams");
            consumers = Bool(query, "consumers");
            config = Bool(query, "config");
            offset = Int(query, "offset");
            limit = Int(query, "limit");
            _ = Bool(query, "leader-only");
        }
        catch (FormatException ex)
        {
            return MonitoringResponse.Text(400, ex.Message);
        }

        streams |= consumers;
        accounts |= streams;
        if (query.TryGetValue("acc", out var account) && account.Length > 0 && account != JetStreamEngine.Account)
        {
            accounts = false;
        }

        var all = engine.StreamsByName();
        using var buffer = new MemoryStream();
        using (var writer = new Utf8JsonWriter(buffer, new JsonWriterOptions { Indented = true, Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping }))
        {
            writer.WriteStartObject();
            writer.WriteString("server_id", identity?.ServerId ?? "");
            WriteTime(writer, "now", GoTime.NowNanoseconds());
            writer.WriteStartObject("config");
            writer.WriteNumber("max_memory", engine.Options.EffectiveMaxMemoryStore);
            writer.WriteNumber("max_storage", engine.Options.EffectiveMaxFileStore);
            writer.WriteString("store_dir", System.IO.Path.Combine(engine.Options.EffectiveStoreDirectory, "jetstream"));
            if (!string.IsNullOrEmpty(engine.Options.Domain))
            {
                writer.WriteString("domain", engine.Options.Domain);
            }

            writer.WriteEndObject();
            WriteStats(writer, includeAccounts: true);
            writer.WriteNumber("streams", all.Count);
            writer.WriteNumber("consumers", all.Sum(s => s.ConsumerCount));
            writer.WriteNumber("messages", all.Aggregate(0UL, (sum, s) => sum + s.Store.GetState().Messages));
            writer.WriteNumber("bytes", all.Aggregate(0UL, (sum, s) => sum + s.Store.GetState().Bytes));
            if (accounts && offset == 0 && (limit <= 0 || limit >= 1))
            {
                writer.WriteStartArray("account_details");
                writer.WriteStartObject();
                writer.WriteString("name", JetStreamEngine.Account);
                writer.WriteString("id", JetStreamEngine.Account);
                WriteStats(writer, includeAccounts: false);
                if (streams && all.Count > 0)
                {
                    writer.WriteStartArray("stream_detail");
                    foreach (var stream in all)
                    {
                        WriteStream(writer, stream, consumers, config);
                    }

                    writer.WriteEndArray();
                }

                writer.WriteEndObject();
                writer.WriteEndArray();
            }

            writer.WriteEndObject();
        }

        return MonitoringResponse.Json(buffer.ToArray());
    }

    private void WriteStats(Utf8JsonWriter writer, bool includeAccounts)
    {
        writer.WriteNumber("memory", Math.Max(0, engine.MemoryUsed));
        writer.WriteNumber("storage", Math.Max(0, engine.StorageUsed));
        writer.WriteNumber("reserved_memory", Math.Max(0, engine.MemoryReserved));
        writer.WriteNumber("reserved_storage", Math.Max(0, engine.StorageReserved));
        writer.WriteNumber("accounts", includeAccounts ? 1 : 0);
        writer.WriteNumber("ha_assets", 0);
        writer.WriteStartObject("api");
        writer.WriteNumber("total", engine.ApiTotal);
        writer.WriteNumber("errors", engine.ApiErrors);
        writer.WriteEndObject();
    }

    private static void WriteStream(Utf8JsonWriter writer, Streams.MessageStream stream, bool consumers, bool config)
    {
        writer.WriteStartObject();
        writer.WriteString("name", stream.Name);
        WriteTime(writer, "created", stream.Created);
        if (config)
        {
            writer.WritePropertyName("config");
            JsonSerializer.Serialize(writer, stream.Config, JetStreamJson.Context.StreamConfig);
        }

        writer.WritePropertyName("state");
        JsonSerializer.Serialize(writer, stream.State(), JetStreamJson.Context.StreamStateModel);
        if (consumers && stream.ConsumerCount > 0)
        {
            writer.WriteStartArray("consumer_detail");
            foreach (var consumer in stream.ConsumersByName())
            {
                var info = consumer.Info();
                if (!config)
                {
                    info.Config = null;
                }

                JsonSerializer.Serialize(writer, info, JetStreamJson.Context.ConsumerInfoModel);
            }

            writer.WriteEndArray();
        }

        writer.WriteEndObject();
    }

    private static void WriteTime(Utf8JsonWriter writer, string name, long nanoseconds)
    {
        Span<byte> text = stackalloc byte[40];
        writer.WriteString(name, text[..GoTime.Write(text, nanoseconds)]);
    }

    private static bool Bool(IReadOnlyDictionary<string, string> query, string name)
    {
        if (!query.TryGetValue(name, out var text) || text.Length == 0)
        {
            return false;
        }

        return text switch
        {
            "1" or "t" or "T" or "TRUE" or "true" or "True" => true,
            "0" or "f" or "F" or "FALSE" or "false" or "False" => false,
            _ => throw new FormatException($"Error decoding boolean for '{name}': strconv.ParseBool: parsing \"{text}\": invalid syntax"),
        };
    }

    private static int Int(IReadOnlyDictionary<string, string> query, string name)
    {
        if (!query.TryGetValue(name, out var text) || text.Length == 0)
        {
            return 0;
        }

        return int.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var value)
            ? value
            : throw new FormatException($"Error decoding int for '{name}': strconv.Atoi: parsing \"{text}\": invalid syntax");
    }
}
