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
    public byte[] ToProtocolLine()
    {
        var json = JsonSerializer.SerializeToUtf8Bytes(this, ProtocolJsonContext.Default.ServerInfo);
        var line = new byte[5 + json.Length + 2];
        "INFO "u8.CopyTo(line);
        json.CopyTo(line.AsSpan(5));
        "\r\n"u8.CopyTo(line.AsSpan(5 + json.Length));
        return line;
    }

    public ServerInfo Clone() => (ServerInfo)MemberwiseClone();
}
