using System.Text.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Json;

/// <summary>
/// The parts of a stream configuration and info that name other streams or subjects (a mirror or source, its
/// external prefixes and subject transforms, <c>republish</c>) read and written as <see cref="JetStreamJson.Context"/>
/// does; see <see cref="StreamConfigJson"/>.
/// </summary>
internal static class StreamSourceJson
{
    /// <summary>nats-server's <c>ExternalStream</c>: <c>api</c> and <c>deliver</c>.</summary>
    public static void WriteExternal(Utf8JsonWriter writer, ExternalStreamConfig external)
    {
        writer.WriteStartObject("external");
        writer.WriteString("api", external.Api);
        writer.WriteString("deliver", external.Deliver);
        writer.WriteEndObject();
    }

    public static void WriteTransforms(Utf8JsonWriter writer, List<SubjectTransformConfig> transforms)
    {
        writer.WriteStartArray("subject_transforms");
        foreach (SubjectTransformConfig? transform in transforms)
        {
            WriteTransform(writer, transform);
        }

        writer.WriteEndArray();
    }

    public static void WriteSource(Utf8JsonWriter writer, StreamSourceConfig? source)
    {
        if (source is null)
        {
            writer.WriteNullValue();
            return;
        }

        writer.WriteStartObject();
        writer.WriteString("name", source.Name);
        if (source.OptStartSeq != 0)
        {
            writer.WriteNumber("opt_start_seq", source.OptStartSeq);
        }

        if (source.OptStartTime is { } start)
        {
            JsonValues.WriteTime(writer, "opt_start_time", start);
        }

        if (source.FilterSubject is not null)
        {
            writer.WriteString("filter_subject", source.FilterSubject);
        }

        if (source.External is not null)
        {
            WriteExternal(writer, source.External);
        }

        if (source.SubjectTransforms is not null)
        {
            WriteTransforms(writer, source.SubjectTransforms);
        }

        writer.WriteEndObject();
    }

    public static void WriteTransform(Utf8JsonWriter writer, SubjectTransformConfig? transform)
    {
        if (transform is null)
        {
            writer.WriteNullValue();
            return;
        }

        writer.WriteStartObject();
        writer.WriteString("src", transform.Source);
        writer.WriteString("dest", transform.Destination);
        writer.WriteEndObject();
    }

    public static List<StreamSourceConfig>? ReadSources(ref Utf8JsonReader reader)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        JsonValues.Expect(ref reader, JsonTokenType.StartArray);
        var sources = new List<StreamSourceConfig>();
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            sources.Add(ReadSource(ref reader)!);
        }

        return sources;
    }

    public static StreamSourceConfig? ReadSource(ref Utf8JsonReader reader)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        JsonValues.Expect(ref reader, JsonTokenType.StartObject);
        var source = new StreamSourceConfig();
        while (JsonValues.NextProperty(ref reader, out var name))
        {
            switch (name)
            {
                case "name": source.Name = JsonValues.StringOrNull(ref reader); break;
                case "opt_start_seq": source.OptStartSeq = JsonValues.UInt64(ref reader); break;
                case "opt_start_time": source.OptStartTime = JsonValues.NullableTime(ref reader); break;
                case "filter_subject": source.FilterSubject = JsonValues.String(ref reader); break;
                case "external": source.External = ReadExternal(ref reader); break;
                case "subject_transforms": source.SubjectTransforms = ReadTransforms(ref reader); break;
                default: reader.Skip(); break;
            }
        }

        return source;
    }

    public static ExternalStreamConfig? ReadExternal(ref Utf8JsonReader reader)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        JsonValues.Expect(ref reader, JsonTokenType.StartObject);
        var external = new ExternalStreamConfig();
        while (JsonValues.NextProperty(ref reader, out var name))
        {
            switch (name)
            {
                case "api": external.Api = JsonValues.StringOrNull(ref reader); break;
                case "deliver": external.Deliver = JsonValues.StringOrNull(ref reader); break;
                default: reader.Skip(); break;
            }
        }

        return external;
    }

    public static List<SubjectTransformConfig>? ReadTransforms(ref Utf8JsonReader reader)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        JsonValues.Expect(ref reader, JsonTokenType.StartArray);
        var transforms = new List<SubjectTransformConfig>();
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            transforms.Add(ReadTransform(ref reader)!);
        }

        return transforms;
    }

    public static SubjectTransformConfig? ReadTransform(ref Utf8JsonReader reader)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        JsonValues.Expect(ref reader, JsonTokenType.StartObject);
        var transform = new SubjectTransformConfig();
        while (JsonValues.NextProperty(ref reader, out var name))
        {
            switch (name)
            {
                case "src": transform.Source = JsonValues.StringOrNull(ref reader); break;
                case "dest": transform.Destination = JsonValues.StringOrNull(ref reader); break;
                default: reader.Skip(); break;
            }
        }

        return transform;
    }

    public static RePublishConfig? ReadRePublish(ref Utf8JsonReader reader)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        JsonValues.Expect(ref reader, JsonTokenType.StartObject);
        var republish = new RePublishConfig();
        while (JsonValues.NextProperty(ref reader, out var name))
        {
            switch (name)
            {
                case "src": republish.Source = JsonValues.String(ref reader); break;
                case "dest": republish.Destination = JsonValues.StringOrNull(ref reader); break;
                case "headers_only": republish.HeadersOnly = JsonValues.Bool(ref reader); break;
                default: reader.Skip(); break;
            }
        }

        return republish;
    }

    public static void WriteRePublish(Utf8JsonWriter writer, RePublishConfig republish)
    {
        writer.WriteStartObject();
        if (republish.Source is not null)
        {
            writer.WriteString("src", republish.Source);
        }

        writer.WriteString("dest", republish.Destination);
        if (republish.HeadersOnly)
        {
            writer.WriteBoolean("headers_only", true);
        }

        writer.WriteEndObject();
    }
}
