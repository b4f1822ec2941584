using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Broker.Core.Internal.Events;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Events;

/// <summary>
/// The JSON of a JetStream advisory or metric as nats-server marshals its event structs (<c>jetstream_events.go</c>):
/// the embedded <c>TypedEvent</c> first (<c>type</c>, a NUID-like <c>id</c>, the UTC <c>timestamp</c>), the event's
/// own fields in their declared order, <c>domain</c> last and only when one is served.
/// </summary>
internal static class AdvisoryJson
{
    private static readonly JsonWriterOptions Options = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    /// <summary>Opens the object and writes <c>type</c>, <c>id</c> and <c>timestamp</c>; the caller writes the rest, then <see cref="End"/>.</summary>
    public static Utf8JsonWriter Begin(ArrayBufferWriter<byte> buffer, string type)
    {
        var writer = new Utf8JsonWriter(buffer, Options);
        writer.WriteStartObject();
        writer.WriteString("type", type);
        writer.WriteString("id", EventIds.Next());
        writer.WriteString("timestamp", GoTime.Format(GoTime.NowNanoseconds()));
        return writer;
    }

    /// <summary>Writes <c>domain</c> when there is one, closes the object and returns the body.</summary>
    public static byte[] End(Utf8JsonWriter writer, ArrayBufferWriter<byte> buffer, string? domain)
    {
        if (!string.IsNullOrEmpty(domain))
        {
            writer.WriteString("domain", domain);
        }

        writer.WriteEndObject();
        writer.Flush();
        writer.Dispose();
        return buffer.WrittenSpan.ToArray();
    }
}
