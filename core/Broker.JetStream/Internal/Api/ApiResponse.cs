using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// Builds an API response the way nats-server's embedded Go structs serialise: <c>{"type":..., "error":..., then the
/// fields of each embedded part}</c>. Each part is serialised on its own and spliced in without its braces.
/// </summary>
internal sealed class ApiResponse
{
    private readonly List<byte[]> parts = [];
    private readonly string type;
    private ApiError? error;

    public ApiResponse(string type)
    {
        this.type = "io.nats.jetstream.api.v1." + type;
    }

    public ApiError? Error => error;

    public ApiResponse WithError(ApiError value)
    {
        error = value;
        return this;
    }

    /// <summary>Adds the fields of <paramref name="value"/> after those already added.</summary>
    public ApiResponse With<T>(T value, JsonTypeInfo<T> typeInfo)
    {
        parts.Add(JsonSerializer.SerializeToUtf8Bytes(value, typeInfo));
        return this;
    }

    /// <summary>Adds the fields of a stream info (written without the serializer's metadata: <see cref="StreamInfoJson"/>).</summary>
    public ApiResponse With(StreamInfoModel info)
    {
        parts.Add(StreamInfoJson.Write(info));
        return this;
    }

    /// <summary>Adds the fields of a consumer info (written without the serializer's metadata: <see cref="ConsumerJson"/>).</summary>
    public ApiResponse With(ConsumerInfoModel info)
    {
        parts.Add(ConsumerJson.Write(info));
        return this;
    }

    /// <summary>Adds the paging block's fields.</summary>
    public ApiResponse With(ApiPaged paged)
    {
        parts.Add(StreamInfoJson.Write(paged));
        return this;
    }

    /// <summary>Adds one raw field, <c>"name":json</c>.</summary>
    public ApiResponse WithField(string name, string json)
    {
        parts.Add(Encoding.UTF8.GetBytes("{\"" + name + "\":" + json + "}"));
        return this;
    }

    public byte[] ToBytes()
    {
        using var stream = new MemoryStream();
        stream.Write("{\"type\":\""u8);
        stream.Write(Encoding.UTF8.GetBytes(type));
        stream.WriteByte((byte)'"');
        if (error is not null)
        {
            stream.Write(",\"error\":"u8);
            stream.Write(JsonSerializer.SerializeToUtf8Bytes(error, JetStreamJson.Context.ApiError));
        }

        foreach (var part in parts)
        {
            // "{...}" without its braces; an empty object adds nothing.
            if (part.Length > 2)
            {
                stream.WriteByte((byte)',');
                stream.Write(part.AsSpan(1, part.Length - 2));
            }
        }

        stream.WriteByte((byte)'}');
        return stream.ToArray();
    }
}
