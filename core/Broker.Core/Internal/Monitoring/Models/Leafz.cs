using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Monitoring.Models;

/// <summary>/leafz: the leaf node links (nats-server 2.9.10's <c>Leafz</c>).</summary>
internal sealed class Leafz
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = string.Empty;

    [JsonPropertyName("now")]
    public DateTime Now { get; set; }

    [JsonPropertyName("leafnodes")]
    public int LeafNodes { get; set; }

    /// <summary>Null (written as such) without links, as Go writes its nil slice.</summary>
    [JsonPropertyName("leafs")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public List<LeafzEntry>? Leafs { get; set; }
}

/// <summary>One link (nats-server 2.9.10's <c>LeafInfo</c>; <c>name</c> and <c>is_spoke</c> came in 2.10).</summary>
internal sealed class LeafzEntry
{
    [JsonPropertyName("account")]
    public string Account { get; set; } = string.Empty;

    [JsonPropertyName("ip")]
    public string Ip { get; set; } = string.Empty;

    [JsonPropertyName("port")]
    public int Port { get; set; }

    [JsonPropertyName("rtt")]
    public string? Rtt { get; set; }

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

    [JsonPropertyName("subscriptions_list")]
    public List<string>? SubscriptionsList { get; set; }
}

/// <summary>/varz <c>leaf</c> (nats-server's <c>LeafNodeOptsVarz</c>): empty without leaf node settings.</summary>
internal sealed class LeafVarz
{
    [JsonPropertyName("host")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Host { get; set; }

    [JsonPropertyName("port")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int Port { get; set; }

    [JsonPropertyName("auth_timeout")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public double AuthTimeout { get; set; }

    [JsonPropertyName("tls_timeout")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public double TlsTimeout { get; set; }

    [JsonPropertyName("tls_required")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool TlsRequired { get; set; }

    [JsonPropertyName("tls_verify")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool TlsVerify { get; set; }

    [JsonPropertyName("remotes")]
    public List<LeafRemoteVarz>? Remotes { get; set; }
}

/// <summary>One remote in /varz (nats-server's <c>RemoteLeafOptsVarz</c>).</summary>
internal sealed class LeafRemoteVarz
{
    [JsonPropertyName("local_account")]
    public string? LocalAccount { get; set; }

    [JsonPropertyName("urls")]
    public List<string>? Urls { get; set; }

    [JsonPropertyName("deny")]
    public LeafDenyVarz? Deny { get; set; }
}

/// <summary>A remote's deny rules (nats-server's <c>DenyRules</c>).</summary>
internal sealed class LeafDenyVarz
{
    [JsonPropertyName("exports")]
    public List<string>? Exports { get; set; }

    [JsonPropertyName("imports")]
    public List<string>? Imports { get; set; }
}
