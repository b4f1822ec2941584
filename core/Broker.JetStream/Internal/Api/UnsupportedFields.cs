using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// Stream configuration fields of nats-server versions after 2.9 that this broker does not implement. nats-server (Go's
/// <c>encoding/json</c>) ignores fields it does not know, so an older server answers a request using a newer feature
/// with a 200 that silently dropped it; this broker implements some (<c>compression</c>, <c>first_seq</c>; consumer
/// pausing and priority groups) and reads the others and refuses any value but the default instead,
/// with the error nats-server uses for a configuration it cannot take (<c>JSStreamInvalidConfigF</c>). Defaults are accepted (clients send <c>"compression":"none"</c> and the like) and
/// cleared, so they are not echoed back and do not take part in "same configuration" checks. Also the API level a
/// request may require (2.11's <c>Nats-Required-Api-Level</c> header).
/// </summary>
internal static class UnsupportedFields
{
    /// <summary>
    /// The JetStream API level this broker serves (nats-server <c>JSApiLevel</c>): 1, the 2.11 level (consumer pausing,
    /// priority groups, message TTLs and subject delete markers), reported by <c>$JS.API.INFO</c> as <c>api.level</c>;
    /// not the later levels.
    /// </summary>
    public const int ApiLevel = 1;

    /// <summary>The header a client sets to require a minimum API level of the server answering.</summary>
    public static ReadOnlySpan<byte> RequiredApiLevelHeader => "Nats-Required-Api-Level"u8;

    /// <summary>nats-server <c>JSRequiredApiLevelErr</c>.</summary>
    public static ApiError RequiredApiLevel { get; } = new(412, 10185, "JetStream minimum api level required");

    /// <summary>
    /// nats-server <c>errorOnRequiredApiLevel</c>: whether the request's headers require a level above ours (a value that is
    /// not a number counts as too high).
    /// </summary>
    public static bool RequiresHigherApiLevel(ReadOnlySpan<byte> headers)
    {
        if (headers.IsEmpty || !NatsHeaderBlock.TryGetValue(headers, RequiredApiLevelHeader, out var value))
        {
            return false;
        }

        return !int.TryParse(value.Trim(" \t"u8), System.Globalization.NumberStyles.Integer, System.Globalization.CultureInfo.InvariantCulture, out var level)
            || level > ApiLevel;
    }

    /// <summary>The first unsupported stream feature the configuration asks for, or null; clears the defaults.</summary>
    public static string? CheckStream(StreamConfig config)
    {
        if (!IsEmptyObject(config.ConsumerLimits, "inactive_threshold", "max_ack_pending"))
        {
            return "stream consumer limits are not supported by this broker";
        }

        if (config.AllowMsgCounter)
        {
            return "message counters are not supported by this broker";
        }

        if (config.AllowAtomic || config.AllowBatched)
        {
            return "batch publishing is not supported by this broker";
        }

        if (config.AllowMsgSchedules)
        {
            return "message schedules are not supported by this broker";
        }

        if (!IsDefaultName(config.PersistMode, "default"))
        {
            return "stream persist modes are not supported by this broker";
        }

        config.ConsumerLimits = null;
        config.PersistMode = null;
        return null;
    }

    private static bool IsDefaultName(string? value, string name) => string.IsNullOrEmpty(value) || value == name;

    /// <summary>Null, or an object whose listed fields are all zero (nats-server's empty struct).</summary>
    private static bool IsEmptyObject(JsonElement? element, params string[] numbers)
    {
        if (element is not { } value || value.ValueKind == JsonValueKind.Null)
        {
            return true;
        }

        if (value.ValueKind != JsonValueKind.Object)
        {
            return false;
        }

        foreach (var property in value.EnumerateObject())
        {
            var zero = property.Value.ValueKind == JsonValueKind.Number && property.Value.TryGetInt64(out var number) && number == 0;
            if (numbers.Contains(property.Name) && !zero)
            {
                return false;
            }
        }

        return true;
    }
}
