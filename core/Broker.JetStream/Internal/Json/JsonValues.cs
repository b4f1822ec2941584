using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Json;

/// <summary>
/// Typed reads of one value at a <see cref="Utf8JsonReader"/> with the rules of <see cref="JetStreamJson.Context"/>
/// (strict numbers, no value from a string, <c>null</c> only for a reference or nullable field), for the hand-written
/// readers that keep System.Text.Json's metadata off a restart (<see cref="StreamConfigJson"/>). A value of the wrong
/// kind throws <see cref="JsonException"/>, as the serializer did; and what the hand-written writers share
/// (<see cref="StreamInfoJson"/>, <see cref="ConsumerJson"/>).
/// </summary>
internal static class JsonValues
{
    /// <summary>The context's writer settings: compact, Go's relaxed escaping.</summary>
    public static readonly JsonWriterOptions WriterOptions = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    // A buffer and writer per thread, reused as the serializer reuses its own (Utf8JsonWriterCache): a new writer and a
    // growing buffer per call were 3.4x the serializer's allocations for one consumer create's two writes (jit1k).
    [ThreadStatic]
    private static ArrayBufferWriter<byte>? cachedBuffer;

    [ThreadStatic]
    private static Utf8JsonWriter? cachedWriter;

    public static string? String(ref Utf8JsonReader reader) => reader.TokenType switch
    {
        JsonTokenType.String => reader.GetString(),
        JsonTokenType.Null => null,
        _ => throw Wrong(ref reader, "string"),
    };

    /// <summary>A non-nullable string field: <c>null</c> sets null, as the serializer did (no nullable annotations are enforced).</summary>
    public static string StringOrNull(ref Utf8JsonReader reader) => String(ref reader)!;

    public static bool Bool(ref Utf8JsonReader reader) => reader.TokenType switch
    {
        JsonTokenType.True => true,
        JsonTokenType.False => false,
        _ => throw Wrong(ref reader, "boolean"),
    };

    public static int Int32(ref Utf8JsonReader reader) =>
        reader.TokenType == JsonTokenType.Number && reader.TryGetInt32(out var value) ? value : throw Wrong(ref reader, "int");

    public static long Int64(ref Utf8JsonReader reader) =>
        reader.TokenType == JsonTokenType.Number && reader.TryGetInt64(out var value) ? value : throw Wrong(ref reader, "long");

    public static ulong UInt64(ref Utf8JsonReader reader) =>
        reader.TokenType == JsonTokenType.Number && reader.TryGetUInt64(out var value) ? value : throw Wrong(ref reader, "ulong");

    /// <summary>A <c>time.Time</c> (<see cref="GoTimeConverter"/>): RFC 3339, <c>null</c> for 0.</summary>
    public static long Time(ref Utf8JsonReader reader) => reader.TokenType switch
    {
        JsonTokenType.Null => 0,
        JsonTokenType.String when GoTime.TryParse(reader.GetString()!, out var value) => value,
        _ => throw new JsonException("not an RFC 3339 time"),
    };

    /// <summary>A <c>*time.Time</c> (<see cref="NullableGoTimeConverter"/>).</summary>
    public static long? NullableTime(ref Utf8JsonReader reader) => reader.TokenType == JsonTokenType.Null ? null : Time(ref reader);

    public static JsonElement? Element(ref Utf8JsonReader reader) => reader.TokenType == JsonTokenType.Null ? null : JsonElement.ParseValue(ref reader);

    /// <summary>A list of strings, or null.</summary>
    public static List<string>? Strings(ref Utf8JsonReader reader)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        Expect(ref reader, JsonTokenType.StartArray);
        var list = new List<string>();
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            list.Add(StringOrNull(ref reader));
        }

        return list;
    }

    /// <summary>An object of strings (<c>metadata</c>), or null; a repeated key keeps its last value.</summary>
    public static Dictionary<string, string>? StringMap(ref Utf8JsonReader reader)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        Expect(ref reader, JsonTokenType.StartObject);
        var map = new Dictionary<string, string>();
        while (NextProperty(ref reader, out var key))
        {
            map[key] = StringOrNull(ref reader);
        }

        return map;
    }

    public static RetentionPolicy Retention(ref Utf8JsonReader reader) =>
        reader.TokenType != JsonTokenType.String ? throw new JsonException("can not unmarshal RetentionPolicy")
        : reader.ValueTextEquals("limits"u8) ? RetentionPolicy.Limits
        : reader.ValueTextEquals("interest"u8) ? RetentionPolicy.Interest
        : reader.ValueTextEquals("workqueue"u8) ? RetentionPolicy.WorkQueue
        : throw new JsonException("can not unmarshal RetentionPolicy");

    public static DiscardPolicy Discard(ref Utf8JsonReader reader) =>
        reader.TokenType != JsonTokenType.String ? throw new JsonException("can not unmarshal DiscardPolicy")
        : reader.ValueTextEquals("old"u8) ? DiscardPolicy.Old
        : reader.ValueTextEquals("new"u8) ? DiscardPolicy.New
        : throw new JsonException("can not unmarshal DiscardPolicy");

    public static string RetentionName(RetentionPolicy value) => value switch
    {
        RetentionPolicy.Limits => "limits",
        RetentionPolicy.Interest => "interest",
        RetentionPolicy.WorkQueue => "workqueue",
        _ => throw new JsonException($"can not marshal {value}"),
    };

    public static string DiscardName(DiscardPolicy value) => value switch
    {
        DiscardPolicy.Old => "old",
        DiscardPolicy.New => "new",
        _ => throw new JsonException($"can not marshal {value}"),
    };

    /// <summary>
    /// Moves to the next property of the object the reader is in and past its name, onto its value; false at the
    /// object's end.
    /// </summary>
    public static bool NextProperty(ref Utf8JsonReader reader, out string name)
    {
        if (!reader.Read() || reader.TokenType == JsonTokenType.EndObject)
        {
            name = "";
            return false;
        }

        name = reader.GetString()!;
        if (!reader.Read())
        {
            throw new JsonException("a property without a value");
        }

        return true;
    }

    public static void Expect(ref Utf8JsonReader reader, JsonTokenType token)
    {
        if (reader.TokenType != token)
        {
            throw new JsonException($"expected {token}, found {reader.TokenType}");
        }
    }

    /// <summary>Writes a <c>time.Time</c> as <see cref="GoTimeConverter"/> does.</summary>
    public static void WriteTime(Utf8JsonWriter writer, string name, long value)
    {
        Span<byte> buffer = stackalloc byte[40];
        writer.WriteString(name, buffer[..GoTime.Write(buffer, value)]);
    }

    /// <summary>Writes a <c>time.Time</c> as <see cref="GoTimeConverter"/> does, its name then its value.</summary>
    public static void WriteTime(Utf8JsonWriter writer, JsonEncodedText name, long value)
    {
        Span<byte> buffer = stackalloc byte[40];
        writer.WritePropertyName(name);
        writer.WriteStringValue(buffer[..GoTime.Write(buffer, value)]);
    }

    /// <summary>
    /// What <paramref name="write"/> writes for <paramref name="value"/>, as a new array, through the thread's writer
    /// (not reentrant: <paramref name="write"/> must not call this again).
    /// </summary>
    public static byte[] ToBytes<T>(T value, Action<Utf8JsonWriter, T> write)
    {
        var buffer = cachedBuffer ??= new ArrayBufferWriter<byte>(1024);
        var writer = cachedWriter ??= new Utf8JsonWriter(buffer, WriterOptions);
        buffer.ResetWrittenCount();
        writer.Reset(buffer);
        write(writer, value);
        writer.Flush();
        var bytes = buffer.WrittenSpan.ToArray();
        if (buffer.Capacity > 64 * 1024)
        {
            // A large value (a consumer's metadata map, a stream of many subjects): its buffer is not kept for the thread.
            cachedBuffer = null;
            cachedWriter = null;
        }

        return bytes;
    }

    private static JsonException Wrong(ref Utf8JsonReader reader, string type) =>
        new($"The JSON value of kind {reader.TokenType} could not be converted to {type}.");
}
