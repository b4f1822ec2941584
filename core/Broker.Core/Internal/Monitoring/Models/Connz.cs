using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Monitoring.Models;

/// <summary>The <c>/connz</c> answer, with nats-server's field names and order (<c>monitor.go: Connz</c>).</summary>
internal sealed class Connz
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("now")]
    public DateTime Now { get; set; }

    [JsonPropertyName("num_connections")]
    public int NumConnections { get; set; }

    [JsonPropertyName("total")]
    public int Total { get; set; }

    [JsonPropertyName("offset")]
    public int Offset { get; set; }

    [JsonPropertyName("limit")]
    public int Limit { get; set; }

    /// <summary>The page; <see langword="null"/> (written as <c>null</c>, as nats-server) for an unknown account.</summary>
    [JsonPropertyName("connections")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public IReadOnlyList<ConnInfo>? Connections { get; set; } = [];
}

/// <summary>One connection in <c>/connz</c> (<c>monitor.go: ConnInfo</c>); optional fields are omitted when null.</summary>
internal sealed class ConnInfo
{
    [JsonPropertyName("cid")]
    public ulong Cid { get; set; }

    [JsonPropertyName("kind")]
    public string Kind { get; set; } = "Client";

    [JsonPropertyName("type")]
    public string Type { get; set; } = "nats";

    [JsonPropertyName("ip")]
    public string Ip { get; set; } = "";

    [JsonPropertyName("port")]
    public int Port { get; set; }

    [JsonPropertyName("start")]
    public DateTime Start { get; set; }

    [JsonPropertyName("last_activity")]
    public DateTime LastActivity { get; set; }

    [JsonPropertyName("stop")]
    public DateTime? Stop { get; set; }

    [JsonPropertyName("reason")]
    public string? Reason { get; set; }

    [JsonPropertyName("rtt")]
    public string Rtt { get; set; } = "0s";

    [JsonPropertyName("uptime")]
    public string Uptime { get; set; } = "0s";

    [JsonPropertyName("idle")]
    public string Idle { get; set; } = "0s";

    [JsonPropertyName("pending_bytes")]
    public long PendingBytes { get; set; }

    [JsonPropertyName("in_msgs")]
    public long InMsgs { get; set; }

    [JsonPropertyName("out_msgs")]
    public long OutMsgs { get; set; }

    [JsonPropertyName("in_bytes")]
    public long InBytes { get; set; }

    [JsonPropertyName("out_bytes")]
    public long OutBytes { get; set; }

    [JsonPropertyName("subscriptions")]
    public int Subscriptions { get; set; }

    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("lang")]
    public string? Lang { get; set; }

    [JsonPropertyName("version")]
    public string? Version { get; set; }

    [JsonPropertyName("tls_version")]
    public string? TlsVersion { get; set; }

    [JsonPropertyName("tls_cipher_suite")]
    public string? TlsCipherSuite { get; set; }

    [JsonPropertyName("tls_first")]
    public bool? TlsFirst { get; set; }

    [JsonPropertyName("authorized_user")]
    public string? AuthorizedUser { get; set; }

    /// <summary>The connection's account, with <c>auth</c> only and never <c>$G</c> (nats-server <c>account</c>).</summary>
    [JsonPropertyName("account")]
    public string? Account { get; set; }

    [JsonPropertyName("subscriptions_list")]
    public IReadOnlyList<string>? SubscriptionsList { get; set; }

    [JsonPropertyName("subscriptions_list_detail")]
    public IReadOnlyList<SubDetail>? SubscriptionsListDetail { get; set; }

    /// <summary>The user JWT, with <c>auth</c> in operator mode.</summary>
    [JsonPropertyName("jwt")]
    public string? Jwt { get; set; }

    /// <summary>The key that signed the user for its account (the account, or its signing key), with <c>auth</c>.</summary>
    [JsonPropertyName("issuer_key")]
    public string? IssuerKey { get; set; }

    /// <summary>The user JWT's name, with <c>auth</c>.</summary>
    [JsonPropertyName("name_tag")]
    public string? NameTag { get; set; }

    /// <summary>The user JWT's tags, with <c>auth</c>.</summary>
    [JsonPropertyName("tags")]
    public IReadOnlyList<string>? Tags { get; set; }

    /// <summary>The MQTT client id of an MQTT connection (nats-server <c>mqtt_client</c>).</summary>
    [JsonPropertyName("mqtt_client")]
    public string? MqttClient { get; set; }

    /// <summary>The round trip for sorting by rtt; not serialized.</summary>
    [JsonIgnore]
    public TimeSpan RoundTrip { get; set; }

    public ConnInfo Clone() => (ConnInfo)MemberwiseClone();
}

/// <summary>One subscription in <c>/connz</c> and <c>/subsz</c> lists (<c>monitor.go: SubDetail</c>).</summary>
internal sealed class SubDetail
{
    /// <summary>The account; only <c>/subsz</c> fills it in.</summary>
    [JsonPropertyName("account")]
    public string? Account { get; set; }

    [JsonPropertyName("subject")]
    public string Subject { get; set; } = "";

    [JsonPropertyName("qgroup")]
    public string? Queue { get; set; }

    [JsonPropertyName("sid")]
    public string Sid { get; set; } = "";

    [JsonPropertyName("msgs")]
    public long Msgs { get; set; }

    [JsonPropertyName("max")]
    public long? Max { get; set; }

    [JsonPropertyName("cid")]
    public ulong Cid { get; set; }
}
