using System.Text.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Json;

/// <summary>
/// A stream's configuration read and written with <see cref="Utf8JsonReader"/> and <see cref="Utf8JsonWriter"/>, byte
/// for byte as <see cref="JetStreamJson.Context"/> reads and writes it, for what a restart does: reading the stored
/// stream's metadata and answering <c>STREAM.INFO</c>.
/// </summary>
/// <remarks>
/// The serializer context creates a type's property metadata at its first use: System.Text.Json's generic property code
/// over <c>bool</c>, <c>int</c>, <c>ulong</c>, <c>long?</c>, <c>JsonElement?</c> and our enums, which no ReadyToRun image
/// holds (type loads and JIT compilations: 42-51 ms of CPU in every restart; docs/benchmarks.md, "restart2"). Requests
/// (<c>STREAM.CREATE</c>, <c>jetstream { strict: true }</c>) still go through the context; tests in
/// <c>StreamJsonTests</c> check both ways against it field by field, so a field added to a model must be added here.
/// </remarks>
internal static class StreamConfigJson
{
    /// <summary>Reads a configuration object at the reader (which stands on its first token), as the context would.</summary>
    public static StreamConfig? Read(ref Utf8JsonReader reader)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        JsonValues.Expect(ref reader, JsonTokenType.StartObject);
        var config = new StreamConfig();
        while (JsonValues.NextProperty(ref reader, out var name))
        {
            switch (name)
            {
                case "name": config.Name = JsonValues.StringOrNull(ref reader); break;
                case "description": config.Description = JsonValues.String(ref reader); break;
                case "subjects": config.Subjects = JsonValues.Strings(ref reader); break;
                case "retention": config.Retention = JsonValues.Retention(ref reader); break;
                case "max_consumers": config.MaxConsumers = JsonValues.Int32(ref reader); break;
                case "max_msgs": config.MaxMsgs = JsonValues.Int64(ref reader); break;
                case "max_bytes": config.MaxBytes = JsonValues.Int64(ref reader); break;
                case "max_age": config.MaxAge = JsonValues.Int64(ref reader); break;
                case "max_msgs_per_subject": config.MaxMsgsPerSubject = JsonValues.Int64(ref reader); break;
                case "max_msg_size": config.MaxMsgSize = JsonValues.Int32(ref reader); break;
                case "discard": config.Discard = JsonValues.Discard(ref reader); break;
                case "storage": config.Storage = JsonValues.StringOrNull(ref reader); break;
                case "num_replicas": config.Replicas = JsonValues.Int32(ref reader); break;
                case "no_ack": config.NoAck = JsonValues.Bool(ref reader); break;
                case "template_owner": config.TemplateOwner = JsonValues.String(ref reader); break;
                case "duplicate_window": config.DuplicateWindow = JsonValues.Int64(ref reader); break;
                case "placement": config.Placement = JsonValues.Element(ref reader); break;
                case "mirror": config.Mirror = StreamSourceJson.ReadSource(ref reader); break;
                case "sources": config.Sources = StreamSourceJson.ReadSources(ref reader); break;
                case "republish": config.RePublish = StreamSourceJson.ReadRePublish(ref reader); break;
                case "subject_transform": config.SubjectTransform = StreamSourceJson.ReadTransform(ref reader); break;
                case "allow_direct": config.AllowDirect = JsonValues.Bool(ref reader); break;
                case "mirror_direct": config.MirrorDirect = JsonValues.Bool(ref reader); break;
                case "discard_new_per_subject": config.DiscardNewPerSubject = JsonValues.Bool(ref reader); break;
                case "sealed": config.Sealed = JsonValues.Bool(ref reader); break;
                case "deny_delete": config.DenyDelete = JsonValues.Bool(ref reader); break;
                case "deny_purge": config.DenyPurge = JsonValues.Bool(ref reader); break;
                case "allow_rollup_hdrs": config.AllowRollup = JsonValues.Bool(ref reader); break;
                case "first_seq": config.FirstSeq = JsonValues.UInt64(ref reader); break;
                case "metadata": config.Metadata = JsonValues.StringMap(ref reader); break;
                case "compression": config.Compression = JsonValues.String(ref reader); break;
                case "consumer_limits": config.ConsumerLimits = JsonValues.Element(ref reader); break;
                case "allow_msg_ttl": config.AllowMsgTtl = JsonValues.Bool(ref reader); break;
                case "subject_delete_marker_ttl": config.SubjectDeleteMarkerTtl = JsonValues.Int64(ref reader); break;
                case "allow_msg_counter": config.AllowMsgCounter = JsonValues.Bool(ref reader); break;
                case "allow_atomic": config.AllowAtomic = JsonValues.Bool(ref reader); break;
                case "allow_msg_schedules": config.AllowMsgSchedules = JsonValues.Bool(ref reader); break;
                case "persist_mode": config.PersistMode = JsonValues.String(ref reader); break;
                case "allow_batched": config.AllowBatched = JsonValues.Bool(ref reader); break;
                default: reader.Skip(); break;
            }
        }

        return config;
    }

    /// <summary>Writes <paramref name="config"/> as the context does: declaration order, the same fields left out.</summary>
    public static void Write(Utf8JsonWriter writer, StreamConfig config)
    {
        writer.WriteStartObject();
        writer.WriteString("name", config.Name);
        if (config.Description is not null)
        {
            writer.WriteString("description", config.Description);
        }

        if (config.Subjects is not null)
        {
            WriteStrings(writer, "subjects", config.Subjects);
        }

        writer.WriteString("retention", JsonValues.RetentionName(config.Retention));
        writer.WriteNumber("max_consumers", config.MaxConsumers);
        writer.WriteNumber("max_msgs", config.MaxMsgs);
        writer.WriteNumber("max_bytes", config.MaxBytes);
        writer.WriteNumber("max_age", config.MaxAge);
        writer.WriteNumber("max_msgs_per_subject", config.MaxMsgsPerSubject);
        if (config.MaxMsgSize != 0)
        {
            writer.WriteNumber("max_msg_size", config.MaxMsgSize);
        }

        writer.WriteString("discard", JsonValues.DiscardName(config.Discard));
        writer.WriteString("storage", config.Storage);
        writer.WriteNumber("num_replicas", config.Replicas);
        WriteIfTrue(writer, "no_ack", config.NoAck);
        if (config.TemplateOwner is not null)
        {
            writer.WriteString("template_owner", config.TemplateOwner);
        }

        if (config.DuplicateWindow != 0)
        {
            writer.WriteNumber("duplicate_window", config.DuplicateWindow);
        }

        if (config.Placement is { } placement)
        {
            writer.WritePropertyName("placement");
            placement.WriteTo(writer);
        }

        if (config.Mirror is not null)
        {
            writer.WritePropertyName("mirror");
            StreamSourceJson.WriteSource(writer, config.Mirror);
        }

        if (config.Sources is not null)
        {
            writer.WriteStartArray("sources");
            foreach (StreamSourceConfig? source in config.Sources)
            {
                StreamSourceJson.WriteSource(writer, source);
            }

            writer.WriteEndArray();
        }

        if (config.RePublish is not null)
        {
            writer.WritePropertyName("republish");
            StreamSourceJson.WriteRePublish(writer, config.RePublish);
        }

        if (config.SubjectTransform is not null)
        {
            writer.WritePropertyName("subject_transform");
            StreamSourceJson.WriteTransform(writer, config.SubjectTransform);
        }

        writer.WriteBoolean("allow_direct", config.AllowDirect);
        writer.WriteBoolean("mirror_direct", config.MirrorDirect);
        WriteIfTrue(writer, "discard_new_per_subject", config.DiscardNewPerSubject);
        writer.WriteBoolean("sealed", config.Sealed);
        writer.WriteBoolean("deny_delete", config.DenyDelete);
        writer.WriteBoolean("deny_purge", config.DenyPurge);
        writer.WriteBoolean("allow_rollup_hdrs", config.AllowRollup);
        if (config.FirstSeq != 0)
        {
            writer.WriteNumber("first_seq", config.FirstSeq);
        }

        if (config.Metadata is not null)
        {
            writer.WriteStartObject("metadata");
            foreach (var (key, value) in config.Metadata)
            {
                writer.WriteString(key, value);
            }

            writer.WriteEndObject();
        }

        if (config.Compression is not null)
        {
            writer.WriteString("compression", config.Compression);
        }

        if (config.ConsumerLimits is { } limits)
        {
            writer.WritePropertyName("consumer_limits");
            limits.WriteTo(writer);
        }

        WriteIfTrue(writer, "allow_msg_ttl", config.AllowMsgTtl);
        if (config.SubjectDeleteMarkerTtl != 0)
        {
            writer.WriteNumber("subject_delete_marker_ttl", config.SubjectDeleteMarkerTtl);
        }

        WriteIfTrue(writer, "allow_msg_counter", config.AllowMsgCounter);
        WriteIfTrue(writer, "allow_atomic", config.AllowAtomic);
        WriteIfTrue(writer, "allow_msg_schedules", config.AllowMsgSchedules);
        if (config.PersistMode is not null)
        {
            writer.WriteString("persist_mode", config.PersistMode);
        }

        WriteIfTrue(writer, "allow_batched", config.AllowBatched);
        writer.WriteEndObject();
    }

    private static void WriteStrings(Utf8JsonWriter writer, string name, List<string> values)
    {
        writer.WriteStartArray(name);
        foreach (var value in values)
        {
            writer.WriteStringValue(value);
        }

        writer.WriteEndArray();
    }

    private static void WriteIfTrue(Utf8JsonWriter writer, string name, bool value)
    {
        if (value)
        {
            writer.WriteBoolean(name, value);
        }
    }
}
