using System.Text;
using System.Text.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Json;

/// <summary>
/// Consumer info and the stored consumer metadata written with <see cref="Utf8JsonWriter"/>, byte for byte as
/// <see cref="JetStreamJson.Context"/> does (as <see cref="StreamInfoJson"/> for streams). Every consumer create writes
/// both, the answer and what its store keeps; through the context's property metadata that was ~100 methods of
/// System.Text.Json's generic code (a property writer per value type and enum, the config's ~40 getters) that the
/// first burst of MQTT QoS 1 subscriptions made hot and the runtime recompiled at tier 1 (issue 25).
/// </summary>
internal static class ConsumerJson
{
    /// <summary>A config as <c>JsonSerializer.Serialize</c> with the context writes it (the update checks compare two).</summary>
    public static string ToJson(ConsumerConfig config) => Encoding.UTF8.GetString(JsonValues.ToBytes(config, Write));

    /// <summary><c>{"config":...,"name":...,"created":...}</c>, what the engine stores with a consumer.</summary>
    public static byte[] Write(StoredConsumerMetadata metadata) => JsonValues.ToBytes(metadata, static (writer, metadata) =>
    {
        writer.WriteStartObject();
        writer.WritePropertyName(N.Config);
        Write(writer, metadata.Config);
        writer.WritePropertyName(N.Name);
        writer.WriteStringValue(metadata.Name);
        JsonValues.WriteTime(writer, N.Created, metadata.Created);
        writer.WriteEndObject();
    });

    /// <summary>The fields of <c>CONSUMER.INFO</c> and <c>CONSUMER.CREATE</c> answers, as an object.</summary>
    public static byte[] Write(ConsumerInfoModel info) => JsonValues.ToBytes(info, static (writer, info) =>
    {
        writer.WriteStartObject();
        writer.WritePropertyName(N.StreamName);
        writer.WriteStringValue(info.Stream);
        writer.WritePropertyName(N.Name);
        writer.WriteStringValue(info.Name);
        JsonValues.WriteTime(writer, N.Created, info.Created);
        if (info.Config is { } config)
        {
            writer.WritePropertyName(N.Config);
            Write(writer, config);
        }

        WriteSequence(writer, N.Delivered, info.Delivered);
        WriteSequence(writer, N.AckFloor, info.AckFloor);
        writer.WritePropertyName(N.NumAckPending);
        writer.WriteNumberValue(info.NumAckPending);
        writer.WritePropertyName(N.NumRedelivered);
        writer.WriteNumberValue(info.NumRedelivered);
        writer.WritePropertyName(N.NumWaiting);
        writer.WriteNumberValue(info.NumWaiting);
        writer.WritePropertyName(N.NumPending);
        writer.WriteNumberValue(info.NumPending);
        WriteIfTrue(writer, N.PushBound, info.PushBound);
        WriteIfTrue(writer, N.Paused, info.Paused);
        WriteIfNotZero(writer, N.PauseRemaining, info.PauseRemaining);
        if (info.PriorityGroups is { } groups)
        {
            writer.WritePropertyName(N.PriorityGroups);
            writer.WriteStartArray();
            foreach (var group in groups)
            {
                WriteGroup(writer, group);
            }

            writer.WriteEndArray();
        }

        writer.WriteEndObject();
    });

    /// <summary>A consumer's config (<c>ConsumerConfig</c>), in the model's field order.</summary>
    public static void Write(Utf8JsonWriter writer, ConsumerConfig config)
    {
        writer.WriteStartObject();
        WriteIfNotNull(writer, N.DurableName, config.Durable);
        WriteIfNotNull(writer, N.Name, config.Name);
        WriteIfNotNull(writer, N.Description, config.Description);
        writer.WritePropertyName(N.DeliverPolicy);
        writer.WriteStringValue(Name(config.DeliverPolicy));
        if (config.OptStartSeq != 0)
        {
            writer.WritePropertyName(N.OptStartSeq);
            writer.WriteNumberValue(config.OptStartSeq);
        }

        if (config.OptStartTime is { } start)
        {
            JsonValues.WriteTime(writer, N.OptStartTime, start);
        }

        writer.WritePropertyName(N.AckPolicy);
        writer.WriteStringValue(Name(config.AckPolicy));
        WriteIfNotZero(writer, N.AckWait, config.AckWait);
        WriteIfNotZero(writer, N.MaxDeliver, config.MaxDeliver);
        if (config.BackOff is { } backOff)
        {
            writer.WritePropertyName(N.Backoff);
            writer.WriteStartArray();
            foreach (var value in backOff)
            {
                writer.WriteNumberValue(value);
            }

            writer.WriteEndArray();
        }

        WriteIfNotNull(writer, N.FilterSubject, config.FilterSubjectUtf8);
        writer.WritePropertyName(N.ReplayPolicy);
        writer.WriteStringValue(config.ReplayPolicy == ReplayPolicy.Original ? "original" : "instant");
        if (config.RateLimit != 0)
        {
            writer.WritePropertyName(N.RateLimitBps);
            writer.WriteNumberValue(config.RateLimit);
        }

        WriteIfNotNull(writer, N.SampleFreq, config.SampleFrequency);
        WriteIfNotZero(writer, N.MaxWaiting, config.MaxWaiting);
        WriteIfNotZero(writer, N.MaxAckPending, config.MaxAckPending);
        WriteIfNotZero(writer, N.IdleHeartbeat, config.Heartbeat);
        WriteIfTrue(writer, N.FlowControl, config.FlowControl);
        WriteIfTrue(writer, N.HeadersOnly, config.HeadersOnly);
        WriteIfNotZero(writer, N.MaxBatch, config.MaxRequestBatch);
        WriteIfNotZero(writer, N.MaxExpires, config.MaxRequestExpires);
        WriteIfNotZero(writer, N.MaxBytes, config.MaxRequestMaxBytes);
        WriteIfNotNull(writer, N.DeliverSubject, config.DeliverSubjectUtf8);
        WriteIfNotNull(writer, N.DeliverGroup, config.DeliverGroup);
        WriteIfNotZero(writer, N.InactiveThreshold, config.InactiveThreshold);
        writer.WritePropertyName(N.NumReplicas);
        writer.WriteNumberValue(config.Replicas);
        WriteIfTrue(writer, N.MemStorage, config.MemoryStorage);
        WriteIfTrue(writer, N.Direct, config.Direct);
        WriteStrings(writer, N.FilterSubjects, config.FilterSubjects);
        if (config.Metadata is { } metadata)
        {
            writer.WritePropertyName(N.Metadata);
            writer.WriteStartObject();
            foreach (var (key, value) in metadata)
            {
                writer.WriteString(key, value);
            }

            writer.WriteEndObject();
        }

        if (config.PauseUntil is { } pause)
        {
            JsonValues.WriteTime(writer, N.PauseUntil, pause);
        }

        WriteStrings(writer, N.PriorityGroups, config.PriorityGroups);
        if (config.PriorityPolicy != PriorityPolicy.None)
        {
            writer.WritePropertyName(N.PriorityPolicy);
            writer.WriteStringValue(config.PriorityPolicy == PriorityPolicy.Overflow ? "overflow" : "pinned_client");
        }

        WriteIfNotZero(writer, N.PriorityTimeout, config.PriorityTimeout);
        writer.WriteEndObject();
    }

    private static string Name(DeliverPolicy value) => value switch
    {
        DeliverPolicy.All => "all",
        DeliverPolicy.Last => "last",
        DeliverPolicy.New => "new",
        DeliverPolicy.ByStartSequence => "by_start_sequence",
        DeliverPolicy.ByStartTime => "by_start_time",
        DeliverPolicy.LastPerSubject => "last_per_subject",
        _ => throw new JsonException($"can not marshal {value}"),
    };

    private static string Name(Abstractions.ConsumerAckPolicy value) => value switch
    {
        Abstractions.ConsumerAckPolicy.None => "none",
        Abstractions.ConsumerAckPolicy.All => "all",
        Abstractions.ConsumerAckPolicy.Explicit => "explicit",
        _ => throw new JsonException($"can not marshal {value}"),
    };

    private static void WriteSequence(Utf8JsonWriter writer, JsonEncodedText name, SequenceInfo sequence)
    {
        writer.WritePropertyName(name);
        writer.WriteStartObject();
        writer.WritePropertyName(N.ConsumerSeq);
        writer.WriteNumberValue(sequence.Consumer);
        writer.WritePropertyName(N.StreamSeq);
        writer.WriteNumberValue(sequence.Stream);
        if (sequence.LastActive is { } active)
        {
            JsonValues.WriteTime(writer, N.LastActive, active);
        }

        writer.WriteEndObject();
    }

    private static void WriteGroup(Utf8JsonWriter writer, PriorityGroupState? group)
    {
        if (group is null)
        {
            writer.WriteNullValue();
            return;
        }

        writer.WriteStartObject();
        writer.WritePropertyName(N.Group);
        writer.WriteStringValue(group.Group);
        WriteIfNotNull(writer, N.PinnedClientId, group.PinnedClientId);
        JsonValues.WriteTime(writer, N.PinnedTs, group.PinnedTs);
        writer.WriteEndObject();
    }

    private static void WriteStrings(Utf8JsonWriter writer, JsonEncodedText name, List<string>? values)
    {
        if (values is null)
        {
            return;
        }

        writer.WritePropertyName(name);
        writer.WriteStartArray();
        foreach (var value in values)
        {
            writer.WriteStringValue(value);
        }

        writer.WriteEndArray();
    }

    private static void WriteIfNotNull(Utf8JsonWriter writer, JsonEncodedText name, string? value)
    {
        if (value is not null)
        {
            writer.WritePropertyName(name);
            writer.WriteStringValue(value);
        }
    }

    // The config holds the deliver and filter subjects in UTF-8: written as they are, no string made for it.
    private static void WriteIfNotNull(Utf8JsonWriter writer, JsonEncodedText name, byte[]? utf8)
    {
        if (utf8 is not null)
        {
            writer.WritePropertyName(name);
            writer.WriteStringValue(utf8);
        }
    }

    private static void WriteIfNotZero(Utf8JsonWriter writer, JsonEncodedText name, long value)
    {
        if (value != 0)
        {
            writer.WritePropertyName(name);
            writer.WriteNumberValue(value);
        }
    }

    private static void WriteIfTrue(Utf8JsonWriter writer, JsonEncodedText name, bool value)
    {
        if (value)
        {
            writer.WritePropertyName(name);
            writer.WriteBooleanValue(value);
        }
    }

    // The property names, escaped once as the serializer's generated metadata holds them; each property is written as
    // the serializer does (its name, then its value), which keeps the writer's methods those the adapter's requests use.
    private static class N
    {
        public static readonly JsonEncodedText AckFloor = JsonEncodedText.Encode("ack_floor");
        public static readonly JsonEncodedText AckPolicy = JsonEncodedText.Encode("ack_policy");
        public static readonly JsonEncodedText AckWait = JsonEncodedText.Encode("ack_wait");
        public static readonly JsonEncodedText Backoff = JsonEncodedText.Encode("backoff");
        public static readonly JsonEncodedText Config = JsonEncodedText.Encode("config");
        public static readonly JsonEncodedText ConsumerSeq = JsonEncodedText.Encode("consumer_seq");
        public static readonly JsonEncodedText Created = JsonEncodedText.Encode("created");
        public static readonly JsonEncodedText DeliverGroup = JsonEncodedText.Encode("deliver_group");
        public static readonly JsonEncodedText DeliverPolicy = JsonEncodedText.Encode("deliver_policy");
        public static readonly JsonEncodedText DeliverSubject = JsonEncodedText.Encode("deliver_subject");
        public static readonly JsonEncodedText Delivered = JsonEncodedText.Encode("delivered");
        public static readonly JsonEncodedText Description = JsonEncodedText.Encode("description");
        public static readonly JsonEncodedText Direct = JsonEncodedText.Encode("direct");
        public static readonly JsonEncodedText DurableName = JsonEncodedText.Encode("durable_name");
        public static readonly JsonEncodedText FilterSubject = JsonEncodedText.Encode("filter_subject");
        public static readonly JsonEncodedText FilterSubjects = JsonEncodedText.Encode("filter_subjects");
        public static readonly JsonEncodedText FlowControl = JsonEncodedText.Encode("flow_control");
        public static readonly JsonEncodedText Group = JsonEncodedText.Encode("group");
        public static readonly JsonEncodedText HeadersOnly = JsonEncodedText.Encode("headers_only");
        public static readonly JsonEncodedText IdleHeartbeat = JsonEncodedText.Encode("idle_heartbeat");
        public static readonly JsonEncodedText InactiveThreshold = JsonEncodedText.Encode("inactive_threshold");
        public static readonly JsonEncodedText LastActive = JsonEncodedText.Encode("last_active");
        public static readonly JsonEncodedText MaxAckPending = JsonEncodedText.Encode("max_ack_pending");
        public static readonly JsonEncodedText MaxBatch = JsonEncodedText.Encode("max_batch");
        public static readonly JsonEncodedText MaxBytes = JsonEncodedText.Encode("max_bytes");
        public static readonly JsonEncodedText MaxDeliver = JsonEncodedText.Encode("max_deliver");
        public static readonly JsonEncodedText MaxExpires = JsonEncodedText.Encode("max_expires");
        public static readonly JsonEncodedText MaxWaiting = JsonEncodedText.Encode("max_waiting");
        public static readonly JsonEncodedText MemStorage = JsonEncodedText.Encode("mem_storage");
        public static readonly JsonEncodedText Metadata = JsonEncodedText.Encode("metadata");
        public static readonly JsonEncodedText Name = JsonEncodedText.Encode("name");
        public static readonly JsonEncodedText NumAckPending = JsonEncodedText.Encode("num_ack_pending");
        public static readonly JsonEncodedText NumPending = JsonEncodedText.Encode("num_pending");
        public static readonly JsonEncodedText NumRedelivered = JsonEncodedText.Encode("num_redelivered");
        public static readonly JsonEncodedText NumReplicas = JsonEncodedText.Encode("num_replicas");
        public static readonly JsonEncodedText NumWaiting = JsonEncodedText.Encode("num_waiting");
        public static readonly JsonEncodedText OptStartSeq = JsonEncodedText.Encode("opt_start_seq");
        public static readonly JsonEncodedText OptStartTime = JsonEncodedText.Encode("opt_start_time");
        public static readonly JsonEncodedText PauseRemaining = JsonEncodedText.Encode("pause_remaining");
        public static readonly JsonEncodedText PauseUntil = JsonEncodedText.Encode("pause_until");
        public static readonly JsonEncodedText Paused = JsonEncodedText.Encode("paused");
        public static readonly JsonEncodedText PinnedClientId = JsonEncodedText.Encode("pinned_client_id");
        public static readonly JsonEncodedText PinnedTs = JsonEncodedText.Encode("pinned_ts");
        public static readonly JsonEncodedText PriorityGroups = JsonEncodedText.Encode("priority_groups");
        public static readonly JsonEncodedText PriorityPolicy = JsonEncodedText.Encode("priority_policy");
        public static readonly JsonEncodedText PriorityTimeout = JsonEncodedText.Encode("priority_timeout");
        public static readonly JsonEncodedText PushBound = JsonEncodedText.Encode("push_bound");
        public static readonly JsonEncodedText RateLimitBps = JsonEncodedText.Encode("rate_limit_bps");
        public static readonly JsonEncodedText ReplayPolicy = JsonEncodedText.Encode("replay_policy");
        public static readonly JsonEncodedText SampleFreq = JsonEncodedText.Encode("sample_freq");
        public static readonly JsonEncodedText StreamName = JsonEncodedText.Encode("stream_name");
        public static readonly JsonEncodedText StreamSeq = JsonEncodedText.Encode("stream_seq");
    }
}
