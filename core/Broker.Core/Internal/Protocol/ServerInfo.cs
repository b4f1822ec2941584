using System.Buffers;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Protocol;

/// <summary>
/// The INFO a client receives on connect, with nats-server's field names (2.10+). <see cref="Version"/> is the
/// nats-server version whose client behaviour we match, because clients gate features on it; our own product
/// version travels in <see cref="BrokerVersion"/>.
/// </summary>
internal sealed class ServerInfo
{
    /// <summary>The nats-server release whose client protocol behaviour this broker matches.</summary>
    public const string CompatibleServerVersion = "2.10.0";

    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("server_name")]
    public string ServerName { get; set; } = "";

    [JsonPropertyName("version")]
    public string Version { get; set; } = CompatibleServerVersion;

    [JsonPropertyName("proto")]
    public int Proto { get; set; } = 1;

    [JsonPropertyName("go")]
    public string Go { get; set; } = "";

    [JsonPropertyName("host")]
    public string Host { get; set; } = "";

    [JsonPropertyName("port")]
    public int Port { get; set; }

    [JsonPropertyName("headers")]
    public bool Headers { get; set; }

    [JsonPropertyName("auth_required")]
    public bool? AuthRequired { get; set; }

    [JsonPropertyName("tls_required")]
    public bool? TlsRequired { get; set; }

    [JsonPropertyName("tls_verify")]
    public bool? TlsVerify { get; set; }

    [JsonPropertyName("tls_available")]
    public bool? TlsAvailable { get; set; }

    [JsonPropertyName("max_payload")]
    public int MaxPayload { get; set; }

    [JsonPropertyName("jetstream")]
    public bool? JetStream { get; set; }

    [JsonPropertyName("client_id")]
    public ulong ClientId { get; set; }

    [JsonPropertyName("client_ip")]
    public string? ClientIp { get; set; }

    [JsonPropertyName("nonce")]
    public string? Nonce { get; set; }

    /// <summary>The cluster's name, when routes are on.</summary>
    [JsonPropertyName("cluster")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Cluster { get; set; }

    /// <summary>The JetStream domain served (nats-server's <c>jetstream { domain }</c>). The properties stand in nats-server's order, the order <see cref="ToProtocolLine"/> writes them.</summary>
    [JsonPropertyName("domain")]
    public string? Domain { get; set; }

    /// <summary>The cluster's client URLs (<c>host:port</c>), when routes are on and <c>no_advertise</c> is not set.</summary>
    [JsonPropertyName("connect_urls")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IList<string>? ConnectUrls { get; set; }

    [JsonPropertyName("ldm")]
    public bool? LameDuckMode { get; set; }

    /// <summary>The server's public curve key (nats-server 2.10 sends it in every INFO; auth callout requests are sealed with it).</summary>
    [JsonPropertyName("xkey")]
    public string? XKey { get; set; }

    [JsonPropertyName("broker_version")]
    public string? BrokerVersion { get; set; }

    /// <summary>The INFO protocol line, <c>INFO {json}\r\n</c>.</summary>
    /// <remarks>
    /// Written with <see cref="Utf8JsonWriter"/> in the declaration order of the properties, leaving out the null
    /// ones (what the source-generated serializer wrote; its metadata cost about 100 JIT compilations at every
    /// process's first connection, docs/benchmarks.md issue 24). Strings are escaped by the writer's default encoder,
    /// the serializer's default.
    /// </remarks>
    public byte[] ToProtocolLine() => WriteProtocolLine().ToArray();

    /// <summary>
    /// The INFO protocol line in this thread's scratch buffer, valid until the thread writes the next one: a
    /// connection's INFO is copied into its output at once, so it allocates no buffer, writer or array (issue 24).
    /// </summary>
    public ReadOnlySpan<byte> WriteProtocolLine()
    {
        var buffer = lineBuffer ??= new ArrayBufferWriter<byte>(512);
        buffer.ResetWrittenCount();
        "INFO "u8.CopyTo(buffer.GetSpan(5));
        buffer.Advance(5);
        var writer = lineWriter ??= new Utf8JsonWriter(buffer);
        writer.Reset(buffer);
        WriteObject(writer);
        writer.Flush();
        "\r\n"u8.CopyTo(buffer.GetSpan(2));
        buffer.Advance(2);
        return buffer.WrittenSpan;
    }

    [ThreadStatic]
    private static ArrayBufferWriter<byte>? lineBuffer;

    [ThreadStatic]
    private static Utf8JsonWriter? lineWriter;

    private void WriteObject(Utf8JsonWriter writer)
    {
        writer.WriteStartObject();
        writer.WriteString("server_id", ServerId);
        writer.WriteString("server_name", ServerName);
        writer.WriteString("version", Version);
        writer.WriteNumber("proto", Proto);
        writer.WriteString("go", Go);
        writer.WriteString("host", Host);
        writer.WriteNumber("port", Port);
        writer.WriteBoolean("headers", Headers);
        WriteIfSet(writer, "auth_required", AuthRequired);
        WriteIfSet(writer, "tls_required", TlsRequired);
        WriteIfSet(writer, "tls_verify", TlsVerify);
        WriteIfSet(writer, "tls_available", TlsAvailable);
        writer.WriteNumber("max_payload", MaxPayload);
        WriteIfSet(writer, "jetstream", JetStream);
        writer.WriteNumber("client_id", ClientId);
        WriteIfSet(writer, "client_ip", ClientIp);
        WriteIfSet(writer, "nonce", Nonce);
        WriteIfSet(writer, "cluster", Cluster);
        WriteIfSet(writer, "domain", Domain);
        if (ConnectUrls is { } urls)
        {
            writer.WriteStartArray("connect_urls");
            foreach (var url in urls)
            {
                writer.WriteStringValue(url);
            }

            writer.WriteEndArray();
        }

        WriteIfSet(writer, "ldm", LameDuckMode);
        WriteIfSet(writer, "xkey", XKey);
        WriteIfSet(writer, "broker_version", BrokerVersion);
        writer.WriteEndObject();
    }

    private static void WriteIfSet(Utf8JsonWriter writer, string name, bool? value)
    {
        if (value is { } set)
        {
            writer.WriteBoolean(name, set);
        }
    }

    private static void WriteIfSet(Utf8JsonWriter writer, string name, string? value)
    {
        if (value is not null)
        {
            writer.WriteString(name, value);
        }
    }

    public ServerInfo Clone() => (ServerInfo)MemberwiseClone();
}
