using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Monitoring.Models;

/// <summary>/routez: the routes to other cluster members (nats-server 2.9.10's <c>Routez</c>).</summary>
internal sealed class Routez
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = string.Empty;

    [JsonPropertyName("now")]
    public DateTime Now { get; set; }

    [JsonPropertyName("import")]
    public object? Import { get; set; }

    [JsonPropertyName("export")]
    public object? Export { get; set; }

    [JsonPropertyName("num_routes")]
    public int NumRoutes { get; set; }

    /// <summary>Empty (written as <c>[]</c>) without routes, as Go makes the slice.</summary>
    [JsonPropertyName("routes")]
    public List<RoutezEntry> Routes { get; set; } = [];
}

/// <summary>One route (nats-server 2.9.10's <c>RouteInfo</c>).</summary>
internal sealed class RoutezEntry
{
    [JsonPropertyName("rid")]
    public ulong Rid { get; set; }

    [JsonPropertyName("remote_id")]
    public string RemoteId { get; set; } = string.Empty;

    [JsonPropertyName("did_solicit")]
    public bool DidSolicit { get; set; }

    [JsonPropertyName("is_configured")]
    public bool IsConfigured { get; set; }

    [JsonPropertyName("ip")]
    public string Ip { get; set; } = string.Empty;

    [JsonPropertyName("port")]
    public int Port { get; set; }

    [JsonPropertyName("start")]
    public DateTime Start { get; set; }

    [JsonPropertyName("last_activity")]
    public DateTime LastActivity { get; set; }

    [JsonPropertyName("rtt")]
    public string Rtt { get; set; } = string.Empty;

    [JsonPropertyName("uptime")]
    public string Uptime { get; set; } = string.Empty;

    [JsonPropertyName("idle")]
    public string Idle { get; set; } = string.Empty;

    [JsonPropertyName("pending_size")]
    public int PendingSize { get; set; }

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

/// <summary>/varz <c>cluster</c> (nats-server 2.9.10's <c>ClusterOptsVarz</c>): <c>{}</c> when routes are off.</summary>
internal sealed class ClusterVarz
{
    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("addr")]
    public string? Addr { get; set; }

    [JsonPropertyName("cluster_port")]
    public int? ClusterPort { get; set; }

    [JsonPropertyName("auth_timeout")]
    public double? AuthTimeout { get; set; }

    [JsonPropertyName("urls")]
    public List<string>? Urls { get; set; }

    [JsonPropertyName("tls_timeout")]
    public double? TlsTimeout { get; set; }

    [JsonPropertyName("tls_required")]
    public bool? TlsRequired { get; set; }

    [JsonPropertyName("tls_verify")]
    public bool? TlsVerify { get; set; }
}
