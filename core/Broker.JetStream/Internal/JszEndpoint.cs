using System.Globalization;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal;

/// <summary>
/// <c>/jsz</c> (nats-server <c>HandleJsz</c>, 2.9 fields): configuration, the server's usage, API counters and totals
/// over every account with JetStream; with <c>accounts</c> (or <c>acc</c> naming one), <c>streams</c>, <c>consumers</c>
/// and <c>config</c> the account, stream and consumer details. Indented
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
        var jetStreamAccounts = engine.JetStreamAccounts();
        var all = jetStreamAccounts.SelectMany(a => a.StreamsByName()).ToList();
        var details = Details(jetStreamAccounts, query.GetValueOrDefault("acc"), accounts, offset, limit);
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
            WriteStats(writer, engine.MemoryUsed, engine.StorageUsed, (ulong)Math.Max(0, engine.MemoryReserved), (ulong)Math.Max(0, engine.StorageReserved), jetStreamAccounts.Count, engine.ApiTotal, engine.ApiErrors, UnsupportedFields.ApiLevel);
            writer.WriteNumber("streams", all.Count);
            writer.WriteNumber("consumers", all.Sum(s => s.ConsumerCount));
            writer.WriteNumber("messages", all.Aggregate(0UL, (sum, s) => sum + s.Store.GetState().Messages));
            writer.WriteNumber("bytes", all.Aggregate(0UL, (sum, s) => sum + s.Store.GetState().Bytes));
            if (details.Count > 0)
            {
                writer.WriteStartArray("account_details");
                foreach (var account in details)
                {
                    WriteAccount(writer, account, streams, consumers, config);
                }

                writer.WriteEndArray();
            }

            writer.WriteEndObject();
        }

        return MonitoringResponse.Json(buffer.ToArray());
    }

    /// <summary>
    /// The accounts detailed (nats-server <c>Jsz</c>): the one <c>acc</c> names when it has JetStream, whatever
    /// <c>accounts</c> says; otherwise with <c>accounts</c> every account from <c>offset</c>, at most <c>limit</c>
    /// (default 1024); otherwise none.
    /// </summary>
    private static List<JetStreamAccount> Details(List<JetStreamAccount> all, string? filter, bool accounts, int offset, int limit)
    {
        if (!string.IsNullOrEmpty(filter) && all.Find(a => a.Name == filter) is { } named)
        {
            return [named];
        }

        if (!accounts)
        {
            return [];
        }

        return [.. all.Skip(Math.Max(offset, 0)).Take(limit <= 0 ? 1024 : limit)];
    }

    private static void WriteAccount(Utf8JsonWriter writer, JetStreamAccount account, bool streams, bool consumers, bool config)
    {
        writer.WriteStartObject();
        writer.WriteString("name", account.Name);
        writer.WriteString("id", account.Name);

        // nats-server reports the account's limits as its reservation, an unlimited -1 as Go's uint64 of it.
        var limits = account.Limits;
        WriteStats(writer, account.MemoryUsed, account.StorageUsed, unchecked((ulong)limits.MaxMemory), unchecked((ulong)limits.MaxStorage), 0, account.Api.Total, account.Api.Errors, apiLevel: 0);
        var list = streams ? account.StreamsByName() : [];
        if (list.Count > 0)
        {
            writer.WriteStartArray("stream_detail");
            foreach (var stream in list)
            {
                WriteStream(writer, stream, consumers, config);
            }

            writer.WriteEndArray();
        }

        writer.WriteEndObject();
    }

    /// <summary>
    /// nats-server's <c>JetStreamStats</c>. The <c>api</c> block starts with 2.11's <c>level</c>: the server's API level
    /// in the server's totals, and 0 in an account's detail, where 2.11 leaves the field unset.
    /// </summary>
    private static void WriteStats(Utf8JsonWriter writer, long memory, long storage, ulong reservedMemory, ulong reservedStorage, int accounts, long apiTotal, long apiErrors, int apiLevel)
    {
        writer.WriteNumber("memory", Math.Max(0, memory));
        writer.WriteNumber("storage", Math.Max(0, storage));
        writer.WriteNumber("reserved_memory", reservedMemory);
        writer.WriteNumber("reserved_storage", reservedStorage);
        writer.WriteNumber("accounts", accounts);
        writer.WriteNumber("ha_assets", 0);
        writer.WriteStartObject("api");
        writer.WriteNumber("level", apiLevel);
        writer.WriteNumber("total", apiTotal);
        writer.WriteNumber("errors", apiErrors);
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
