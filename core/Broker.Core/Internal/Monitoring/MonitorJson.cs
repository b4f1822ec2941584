using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// Serializes monitoring answers the way nats-server does: indented by two spaces with <c>\n</c> line ends
/// (Go's <c>json.MarshalIndent(v, "", "  ")</c>), except <c>/healthz</c> which is compact, and with non-ASCII text
/// written as is (an rtt of "345µs" stays readable). The answers are served as application/json, never embedded in
/// HTML, so the relaxed escaping is safe.
/// </summary>
internal static class MonitorJson
{
    private static readonly MonitorJsonContext Indented = new(new JsonSerializerOptions(MonitorJsonContext.Default.Options)
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
    });

    private static readonly MonitorJsonContext Compact = new(new JsonSerializerOptions(MonitorJsonContext.Default.Options)
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        WriteIndented = false,
    });

    public static byte[] Serialize(Varz value) => JsonSerializer.SerializeToUtf8Bytes(value, Indented.Varz);

    public static byte[] Serialize(Connz value) => JsonSerializer.SerializeToUtf8Bytes(value, Indented.Connz);

    public static byte[] Serialize(Leafz value) => JsonSerializer.SerializeToUtf8Bytes(value, Indented.Leafz);

    public static byte[] Serialize(Routez value) => JsonSerializer.SerializeToUtf8Bytes(value, Indented.Routez);

    public static byte[] Serialize(Subsz value) => JsonSerializer.SerializeToUtf8Bytes(value, Indented.Subsz);

    public static byte[] Serialize(SublistStats value) => JsonSerializer.SerializeToUtf8Bytes(value, Indented.SublistStats);

    public static byte[] Serialize(Accountz value) => JsonSerializer.SerializeToUtf8Bytes(value, Indented.Accountz);

    public static byte[] Serialize(AccountStatz value) => JsonSerializer.SerializeToUtf8Bytes(value, Indented.AccountStatz);

    public static byte[] Serialize(HealthStatus value) => JsonSerializer.SerializeToUtf8Bytes(value, Compact.HealthStatus);
}

/// <summary>Source-generated JSON metadata for the monitoring answers (no reflection, trimming-safe).</summary>
[JsonSourceGenerationOptions(
    WriteIndented = true,
    IndentSize = 2,
    NewLine = "\n",
    DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull)]
[JsonSerializable(typeof(Varz))]
[JsonSerializable(typeof(Connz))]
[JsonSerializable(typeof(Leafz))]
[JsonSerializable(typeof(Routez))]
[JsonSerializable(typeof(Subsz))]
[JsonSerializable(typeof(SublistStats))]
[JsonSerializable(typeof(Accountz))]
[JsonSerializable(typeof(AccountStatz))]
[JsonSerializable(typeof(HealthStatus))]
internal sealed partial class MonitorJsonContext : JsonSerializerContext;
