using System.Text.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Json;

/// <summary>
/// Stream info, the paging block and the stored stream metadata written (and the metadata read) with
/// <see cref="Utf8JsonWriter"/> and <see cref="Utf8JsonReader"/>, byte for byte as <see cref="JetStreamJson.Context"/>
/// does: a restart reads the metadata and answers <c>STREAM.INFO</c> without System.Text.Json's property metadata (see
/// <see cref="StreamConfigJson"/>).
/// </summary>
internal static class StreamInfoJson
{
    /// <summary><c>{"config":...,"created":...}</c>, what the engine stores with a stream.</summary>
    public static byte[] Write(StoredStreamMetadata metadata) => JsonValues.ToBytes(metadata, static (writer, metadata) =>
    {
        writer.WriteStartObject();
        writer.WritePropertyName("config");
        StreamConfigJson.Write(writer, metadata.Config);
        JsonValues.WriteTime(writer, "created", metadata.Created);
        writer.WriteEndObject();
    });

    /// <summary>
    /// Reads what <see cref="Write(StoredStreamMetadata)"/> wrote (or the context wrote before it); null for a JSON
    /// <c>null</c>. Anything else that is not such an object, a missing <c>config</c> included, throws
    /// <see cref="JsonException"/>.
    /// </summary>
    public static StoredStreamMetadata? ReadMetadata(ReadOnlySpan<byte> json)
    {
        var reader = new Utf8JsonReader(json);
        if (!reader.Read())
        {
            throw new JsonException("no stream metadata");
        }

        if (reader.TokenType == JsonTokenType.Null)
        {
            End(ref reader);
            return null;
        }

        JsonValues.Expect(ref reader, JsonTokenType.StartObject);
        StreamConfig? config = null;
        var hasConfig = false;
        long created = 0;
        while (JsonValues.NextProperty(ref reader, out var name))
        {
            switch (name)
            {
                case "config": config = StreamConfigJson.Read(ref reader); hasConfig = true; break;
                case "created": created = JsonValues.Time(ref reader); break;
                default: reader.Skip(); break;
            }
        }

        End(ref reader);
        return hasConfig
            ? new StoredStreamMetadata { Config = config!, Created = created }
            : throw new JsonException("the stream metadata has no config");
    }

    /// <summary>A stream info object, as <c>STREAM.INFO</c>, <c>CREATE</c> and <c>UPDATE</c> answer it.</summary>
    public static byte[] Write(StreamInfoModel info) => JsonValues.ToBytes(info, static (writer, info) =>
    {
        writer.WriteStartObject();
        writer.WritePropertyName("config");
        StreamConfigJson.Write(writer, info.Config);
        JsonValues.WriteTime(writer, "created", info.Created);
        writer.WritePropertyName("state");
        WriteState(writer, info.State);
        if (info.Domain is not null)
        {
            writer.WriteString("domain", info.Domain);
        }

        if (info.Mirror is not null)
        {
            writer.WritePropertyName("mirror");
            WriteSourceInfo(writer, info.Mirror);
        }

        if (info.Sources is not null)
        {
            writer.WriteStartArray("sources");
            foreach (StreamSourceInfoModel? source in info.Sources)
            {
                WriteSourceInfo(writer, source);
            }

            writer.WriteEndArray();
        }

        writer.WriteEndObject();
    });

    /// <summary>The paging block, <c>{"total":..,"offset":..,"limit":..}</c>.</summary>
    public static byte[] Write(ApiPaged paged) => JsonValues.ToBytes(paged, static (writer, paged) =>
    {
        writer.WriteStartObject();
        writer.WriteNumber("total", paged.Total);
        writer.WriteNumber("offset", paged.Offset);
        writer.WriteNumber("limit", paged.Limit);
        writer.WriteEndObject();
    });

    /// <summary>A JSON string of <paramref name="value"/>, escaped as the context escapes it.</summary>
    public static string Quote(string value) =>
        System.Text.Encoding.UTF8.GetString(JsonValues.ToBytes(value, static (writer, value) => writer.WriteStringValue(value)));

    private static void WriteState(Utf8JsonWriter writer, StreamStateModel? state)
    {
        if (state is null)
        {
            writer.WriteNullValue();
            return;
        }

        writer.WriteStartObject();
        writer.WriteNumber("messages", state.Messages);
        writer.WriteNumber("bytes", state.Bytes);
        writer.WriteNumber("first_seq", state.FirstSeq);
        JsonValues.WriteTime(writer, "first_ts", state.FirstTime);
        writer.WriteNumber("last_seq", state.LastSeq);
        JsonValues.WriteTime(writer, "last_ts", state.LastTime);
        if (state.NumSubjects != 0)
        {
            writer.WriteNumber("num_subjects", state.NumSubjects);
        }

        if (state.Subjects is not null)
        {
            writer.WriteStartObject("subjects");
            foreach (var (subject, count) in state.Subjects)
            {
                writer.WriteNumber(subject, count);
            }

            writer.WriteEndObject();
        }

        if (state.NumDeleted != 0)
        {
            writer.WriteNumber("num_deleted", state.NumDeleted);
        }

        if (state.Deleted is not null)
        {
            writer.WriteStartArray("deleted");
            foreach (var sequence in state.Deleted)
            {
                writer.WriteNumberValue(sequence);
            }

            writer.WriteEndArray();
        }

        writer.WriteNumber("consumer_count", state.Consumers);
        writer.WriteEndObject();
    }

    private static void WriteSourceInfo(Utf8JsonWriter writer, StreamSourceInfoModel? source)
    {
        if (source is null)
        {
            writer.WriteNullValue();
            return;
        }

        writer.WriteStartObject();
        writer.WriteString("name", source.Name);
        if (source.External is not null)
        {
            StreamSourceJson.WriteExternal(writer, source.External);
        }

        writer.WriteNumber("lag", source.Lag);
        writer.WriteNumber("active", source.Active);
        if (source.Error is { } error)
        {
            writer.WriteStartObject("error");
            writer.WriteNumber("code", error.Code);
            writer.WriteNumber("err_code", error.ErrorCode);
            writer.WriteString("description", error.Description);
            writer.WriteEndObject();
        }

        if (source.SubjectTransforms is not null)
        {
            StreamSourceJson.WriteTransforms(writer, source.SubjectTransforms);
        }

        writer.WriteEndObject();
    }

    // After the root value, only whitespace (the reader throws on a second value).
    private static void End(ref Utf8JsonReader reader)
    {
        if (reader.Read())
        {
            throw new JsonException("data after the stream metadata");
        }
    }
}
