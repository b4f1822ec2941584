using System.Buffers;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace Broker.Adapters.Mqtt.Internal.JetStream;

/// <summary>Streams and consumers: created once at start (streams) or per subscription (consumers).</summary>
internal sealed partial class JetStreamClient
{
    /// <summary>
    /// Creates the stream, or accepts an existing one of that name; an existing stream whose config differs from the
    /// spec in what the spec sets is updated, keeping everything else an operator may have changed. The storage is
    /// chosen at creation only: JetStream cannot change it (an existing stream keeps its own).
    /// </summary>
    public async Task EnsureStreamAsync(StreamSpec spec, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(spec);
        JsonObject? existing;
        try
        {
            var info = await RequestNodeAsync(Prefix + "STREAM.INFO." + spec.Name, default, cancellationToken).ConfigureAwait(false);
            existing = info["config"] as JsonObject;
        }
        catch (JetStreamApiException ex) when (ex.ErrorCode == JetStreamApiException.StreamNotFound)
        {
            existing = null;
        }

        if (existing is null)
        {
            var config = new JsonObject();
            Apply(config, spec);
            try
            {
                await RequestNodeAsync(Prefix + "STREAM.CREATE." + spec.Name, ToUtf8(config), cancellationToken).ConfigureAwait(false);
                return;
            }
            catch (JetStreamApiException ex) when (ex.ErrorCode == JetStreamApiException.StreamNameExist)
            {
                // Created meanwhile by someone else with another config: update it below.
                var info = await RequestNodeAsync(Prefix + "STREAM.INFO." + spec.Name, default, cancellationToken).ConfigureAwait(false);
                existing = info["config"] as JsonObject;
                if (existing is null)
                {
                    throw;
                }
            }
        }

        if (Matches(existing, spec))
        {
            return;
        }

        Apply(existing, spec, keepStorage: true);
        await RequestNodeAsync(Prefix + "STREAM.UPDATE." + spec.Name, ToUtf8(existing), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Creates a durable push consumer, or accepts an existing one with the same config.</summary>
    public Task CreateConsumerAsync(string stream, ConsumerSpec spec, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(spec);
        var request = new ConsumerCreateRequest
        {
            StreamName = stream,
            Config = new ConsumerConfigModel
            {
                DurableName = spec.DurableName,
                DeliverSubject = spec.DeliverSubject,
                DeliverGroup = spec.DeliverGroup,
                DeliverPolicy = spec.DeliverPolicy == ConsumerDeliverPolicy.New ? "new" : "all",
                AckPolicy = "explicit",
                AckWait = spec.AckWait.Ticks * 100,
                FilterSubject = spec.MoreFilterSubjects is { Count: > 0 } ? null : spec.FilterSubject,
                FilterSubjects = spec.MoreFilterSubjects is { Count: > 0 } more ? [spec.FilterSubject, .. more] : null,
                MaxAckPending = spec.MaxAckPending,
                MemoryStorage = spec.MemoryStorage,
                InactiveThreshold = (spec.InactiveThreshold?.Ticks ?? 0) * 100,
            },
        };
        var body = JsonSerializer.SerializeToUtf8Bytes(request, MqttJsonContext.Default.ConsumerCreateRequest);
        return RequestAsync($"{Prefix}CONSUMER.DURABLE.CREATE.{stream}.{spec.DurableName}", body, cancellationToken);
    }

    /// <summary>Deletes a consumer; nothing happens when it does not exist.</summary>
    public async Task DeleteConsumerAsync(string stream, string name, CancellationToken cancellationToken)
    {
        try
        {
            await RequestAsync($"{Prefix}CONSUMER.DELETE.{stream}.{name}", default, cancellationToken).ConfigureAwait(false);
        }
        catch (JetStreamApiException ex) when (ex.ErrorCode == JetStreamApiException.ConsumerNotFound)
        {
        }
    }

    /// <summary>
    /// Deletes a consumer as <see cref="DeleteConsumerAsync"/> does, but returns <see langword="false"/> instead of
    /// throwing when no answer came within <see cref="RequestTimeout"/> (<see cref="NoAnswer"/>): an ended session's
    /// deletes are queued together, and at a leave of 10,000 QoS 1 sessions most outlived the timeout, each thrown
    /// through six frames and caught to be logged at debug (issue 25). The delete still runs when JetStream reaches it.
    /// </summary>
    public async Task<bool> TryDeleteConsumerAsync(string stream, string name)
    {
        var subject = $"{Prefix}CONSUMER.DELETE.{stream}.{name}";
        var request = client.RequestAsync(subject, default, default, RequestTimeout, CancellationToken.None);
        await ((Task)request).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        if (request.IsFaulted && request.Exception.InnerException is TimeoutException)
        {
            return false;
        }

        try
        {
            await AnswerAsync(subject, request).ConfigureAwait(false);
        }
        catch (JetStreamApiException ex) when (ex.ErrorCode == JetStreamApiException.ConsumerNotFound)
        {
        }

        return true;
    }

    private static string RetentionName(StreamRetention retention) => retention switch
    {
        StreamRetention.Interest => "interest",
        StreamRetention.WorkQueue => "workqueue",
        _ => "limits",
    };

    private static string StorageName(StreamStorage storage) => storage == StreamStorage.Memory ? "memory" : "file";

    private static void Apply(JsonObject config, StreamSpec spec, bool keepStorage = false)
    {
        config["name"] = spec.Name;
        config["subjects"] = new JsonArray([.. spec.Subjects.Select(s => (JsonNode)s)]);
        config["retention"] = RetentionName(spec.Retention);
        config["max_msgs_per_subject"] = spec.MaxMessagesPerSubject;
        if (!keepStorage || config["storage"] is null)
        {
            config["storage"] = StorageName(spec.Storage);
        }
    }

    /// <summary>Whether an existing config already has what the spec sets (subjects in any order; storage aside).</summary>
    private static bool Matches(JsonObject config, StreamSpec spec)
    {
        var subjects = (config["subjects"] as JsonArray)?.Select(n => n?.GetValue<string>()).ToHashSet(StringComparer.Ordinal) ?? [];
        return subjects.SetEquals(spec.Subjects)
            && string.Equals(config["retention"]?.GetValue<string>(), RetentionName(spec.Retention), StringComparison.Ordinal)
            && config["max_msgs_per_subject"]?.GetValue<long>() == spec.MaxMessagesPerSubject;
    }

    private static byte[] ToUtf8(JsonNode node)
    {
        var buffer = new ArrayBufferWriter<byte>();
        using (var writer = new Utf8JsonWriter(buffer))
        {
            node.WriteTo(writer);
        }

        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>
    /// The subjects of a stream that hold messages, matching <paramref name="filter"/>: <c>STREAM.INFO</c> with
    /// <c>subjects_filter</c>, page by page (nats-server pages them).
    /// </summary>
    public async Task<HashSet<string>> ListSubjectsAsync(string stream, string filter, CancellationToken cancellationToken)
    {
        var subjects = new HashSet<string>(StringComparer.Ordinal);
        while (true)
        {
            var body = new JsonObject { ["subjects_filter"] = filter, ["offset"] = subjects.Count };
            var info = await RequestNodeAsync(Prefix + "STREAM.INFO." + stream, ToUtf8(body), cancellationToken).ConfigureAwait(false);
            var before = subjects.Count;
            if (info["state"]?["subjects"] is JsonObject page)
            {
                foreach (var (subject, _) in page)
                {
                    subjects.Add(subject);
                }
            }

            var total = info["total"]?.GetValue<long>() ?? 0;
            if (subjects.Count == before || subjects.Count >= total)
            {
                return subjects;
            }
        }
    }

    /// <summary>A request whose whole answer is needed (stream configs are kept as they are, unknown fields included).</summary>
    private async Task<JsonObject> RequestNodeAsync(string subject, ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
    {
        // RequestAsync checks for an error; the answer is parsed a second time as a tree, which is rare (start-up only).
        var raw = await RequestRawAsync(subject, body, cancellationToken).ConfigureAwait(false);
        try
        {
            return JsonNode.Parse(raw.Span) as JsonObject ?? throw new JetStreamApiException(subject, 500, 0, "the answer is not a JSON object");
        }
        catch (JsonException ex)
        {
            throw new JetStreamApiException(subject, 500, 0, "the answer is not valid JSON: " + ex.Message, ex);
        }
    }
}
