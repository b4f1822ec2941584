using System.Text.Json;
using System.Text.Json.Serialization;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Json;

/// <summary>
/// An enum written as nats-server's lower-case names; an unknown name fails the parse, which the API reports as
/// <c>invalid JSON</c> (10025), as Go's <c>UnmarshalJSON</c> does.
/// </summary>
internal abstract class EnumNameConverter<T>(params (T Value, string Name)[] names) : JsonConverter<T>
    where T : struct, Enum
{
    public override T Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        if (reader.TokenType == JsonTokenType.String)
        {
            foreach (var (value, name) in names)
            {
                if (reader.ValueTextEquals(name))
                {
                    return value;
                }
            }
        }

        throw new JsonException($"can not unmarshal {typeof(T).Name}");
    }

    public override void Write(Utf8JsonWriter writer, T value, JsonSerializerOptions options)
    {
        foreach (var (known, name) in names)
        {
            if (EqualityComparer<T>.Default.Equals(known, value))
            {
                writer.WriteStringValue(name);
                return;
            }
        }

        throw new JsonException($"can not marshal {value}");
    }

    public static string NameOf(T value, (T Value, string Name)[] table) => table.First(entry => EqualityComparer<T>.Default.Equals(entry.Value, value)).Name;
}

internal sealed class RetentionConverter() : EnumNameConverter<RetentionPolicy>(
    (RetentionPolicy.Limits, "limits"), (RetentionPolicy.Interest, "interest"), (RetentionPolicy.WorkQueue, "workqueue"));

internal sealed class DiscardConverter() : EnumNameConverter<DiscardPolicy>((DiscardPolicy.Old, "old"), (DiscardPolicy.New, "new"));

internal sealed class AckPolicyConverter() : EnumNameConverter<ConsumerAckPolicy>(
    (ConsumerAckPolicy.None, "none"), (ConsumerAckPolicy.All, "all"), (ConsumerAckPolicy.Explicit, "explicit"));

/// <summary>nats-server's consumer <c>deliver_policy</c>.</summary>
internal enum DeliverPolicy
{
    All,
    Last,
    New,
    ByStartSequence,
    ByStartTime,
    LastPerSubject,
}

internal sealed class DeliverPolicyConverter() : EnumNameConverter<DeliverPolicy>(
    (DeliverPolicy.All, "all"), (DeliverPolicy.Last, "last"), (DeliverPolicy.New, "new"),
    (DeliverPolicy.ByStartSequence, "by_start_sequence"), (DeliverPolicy.ByStartTime, "by_start_time"),
    (DeliverPolicy.LastPerSubject, "last_per_subject"))
{
    // nats-server also reads "undefined" as all.
    public override DeliverPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        reader.TokenType == JsonTokenType.String && reader.ValueTextEquals("undefined") ? DeliverPolicy.All : base.Read(ref reader, typeToConvert, options);
}

/// <summary>nats-server's consumer <c>replay_policy</c>.</summary>
internal enum ReplayPolicy
{
    Instant,
    Original,
}

internal sealed class ReplayPolicyConverter() : EnumNameConverter<ReplayPolicy>((ReplayPolicy.Instant, "instant"), (ReplayPolicy.Original, "original"));

/// <summary>2.10's consumer create <c>action</c>: create only, update only, or either.</summary>
internal enum ConsumerAction
{
    CreateOrUpdate,
    Create,
    Update,
}

internal sealed class ConsumerActionConverter() : EnumNameConverter<ConsumerAction>(
    (ConsumerAction.CreateOrUpdate, ""), (ConsumerAction.Create, "create"), (ConsumerAction.Update, "update"));

/// <summary>2.11's consumer <c>priority_policy</c> (nats-server <c>PriorityPolicy</c>; 2.11 has no <c>prioritized</c>).</summary>
internal enum PriorityPolicy
{
    None,
    Overflow,
    PinnedClient,
}

internal sealed class PriorityPolicyConverter() : EnumNameConverter<PriorityPolicy>(
    (PriorityPolicy.None, "none"), (PriorityPolicy.Overflow, "overflow"), (PriorityPolicy.PinnedClient, "pinned_client"));
