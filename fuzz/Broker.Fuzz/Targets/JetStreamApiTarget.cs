using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Broker.Fuzz.Support;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.Fuzz.Targets;

/// <summary>
/// The JetStream API request decoding (core/Broker.JetStream <c>Internal/Api</c> with the source-generated models and
/// converters of <c>Internal/Json</c>). The first input byte picks the request type, the rest is its JSON body.
/// The API catches <see cref="JsonException"/> (invalid JSON answer) and <see cref="ApiException"/> (validation
/// answer); any other exception would escape the request handler, so it is a crash here. Invariants: a request that
/// decodes serialises and decodes again to the same JSON; stream configs normalise the same way twice; consumer
/// configs with defaults applied are checked without throwing.
/// </summary>
internal sealed class JetStreamApiTarget : IFuzzTarget
{
    private const int MaxAckPending = 1000;

    private static readonly StreamConfig Stream = new() { Name = "FUZZ", Subjects = ["fuzz.>"] };

    public string Name => "jetstream-api";

    public void Run(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty)
        {
            return;
        }

        var body = input[1..];
        var context = JetStreamJson.Context;
        switch (input[0] % 8)
        {
            case 0:
                if (Decode(body, context.StreamConfig) is { } stream)
                {
                    CheckStream(stream);
                }

                break;
            case 1:
                if (Decode(body, context.ConsumerCreateRequest) is { } create)
                {
                    CheckConsumer(create.Config);
                }

                break;
            case 2:
                Decode(body, context.ApiListRequest);
                break;
            case 3:
                Decode(body, context.PurgeRequest);
                break;
            case 4:
                Decode(body, context.MessageGetRequest);
                break;
            case 5:
                Decode(body, context.MessageDeleteRequest);
                break;
            case 6:
                Decode(body, context.NextRequest);
                break;
            default:
                Decode(body, context.NakOptions);
                break;
        }
    }

    /// <summary>Decodes as the API does; a decoded value must survive serialise-decode-serialise unchanged.</summary>
    private static T? Decode<T>(ReadOnlySpan<byte> json, JsonTypeInfo<T> typeInfo)
        where T : class
    {
        T? value;
        try
        {
            value = JsonSerializer.Deserialize(json, typeInfo);
        }
        catch (JsonException)
        {
            return null;
        }

        if (value is null)
        {
            return null;
        }

        var first = JsonSerializer.Serialize(value, typeInfo);
        T? again;
        try
        {
            again = JsonSerializer.Deserialize(first, typeInfo);
        }
        catch (JsonException ex)
        {
            throw new InvariantViolation($"{typeof(T).Name} serialised to JSON it cannot read back ({ex.Message}): {first}");
        }

        var second = JsonSerializer.Serialize(again!, typeInfo);
        InvariantViolation.Check(first == second, $"{typeof(T).Name} does not survive a round trip:\n {first}\n {second}");
        return value;
    }

    private static void CheckStream(StreamConfig requested)
    {
        StreamConfig normalized;
        try
        {
            normalized = StreamValidation.Normalize(requested);
        }
        catch (ApiException)
        {
            return;
        }

        var json = JsonSerializer.Serialize(normalized, JetStreamJson.Context.StreamConfig);
        var again = JsonSerializer.Deserialize(json, JetStreamJson.Context.StreamConfig)!;
        StreamConfig twice;
        try
        {
            twice = StreamValidation.Normalize(again);
        }
        catch (ApiException ex)
        {
            throw new InvariantViolation($"a normalised stream config is refused ({ex.Message}): {json}");
        }

        InvariantViolation.Check(
            JsonSerializer.Serialize(twice, JetStreamJson.Context.StreamConfig) == json,
            $"normalising a stream config twice changes it: {json}");
    }

    private static void CheckConsumer(ConsumerConfig config)
    {
        ConsumerValidation.ApplyDefaults(config, MaxAckPending);
        _ = ConsumerValidation.Check(config, Stream, MaxAckPending);
        _ = config.ToJson();
    }
}
