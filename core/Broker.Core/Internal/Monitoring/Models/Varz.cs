using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Monitoring.Models;

/// <summary>
/// The <c>/varz</c> answer with nats-server's field names and order (<c>monitor.go: Varz</c>). Durations are
/// nanoseconds and timeouts float seconds, as Go encodes them. Fields of features we do not have are left out,
/// except the sub-objects (cluster, gateway, ...) which nats-server always writes, empty when unused.
/// </summary>
internal sealed class Varz
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("server_name")]
    public string ServerName { get; set; } = "";

    [JsonPropertyName("version")]
    public string Version { get; set; } = "";

    [JsonPropertyName("proto")]
    public int Proto { get; set; } = 1;

    [JsonPropertyName("go")]
    public string Go { get; set; } = "";

    [JsonPropertyName("host")]
    public string Host { get; set; } = "";

    [JsonPropertyName("port")]
    public int Port { get; set; }

    [JsonPropertyName("auth_required")]
    public bool? AuthRequired { get; set; }

    /// <summary>The cluster's client URLs when routes are on (and <c>no_advertise</c> is not set).</summary>
    [JsonPropertyName("connect_urls")]
    public IList<string>? ConnectUrls { get; set; }

    [JsonPropertyName("max_connections")]
    public int MaxConnections { get; set; }

    [JsonPropertyName("max_subscriptions")]
    public int? MaxSubscriptions { get; set; }

    [JsonPropertyName("ping_interval")]
    public long PingInterval { get; set; }

    [JsonPropertyName("ping_max")]
    public int PingMax { get; set; }

    [JsonPropertyName("http_host")]
    public string HttpHost { get; set; } = "";

    [JsonPropertyName("http_port")]
    public int HttpPort { get; set; }

    [JsonPropertyName("http_base_path")]
    public string HttpBasePath { get; set; } = "";

    [JsonPropertyName("https_port")]
    public int HttpsPort { get; set; }

    [JsonPropertyName("auth_timeout")]
    public double AuthTimeout { get; set; }

    [JsonPropertyName("max_control_line")]
    public int MaxControlLine { get; set; }

    [JsonPropertyName("max_payload")]
    public int MaxPayload { get; set; }

    [JsonPropertyName("max_pending")]
    public long MaxPending { get; set; }

    [JsonPropertyName("cluster")]
    public ClusterVarz Cluster { get; set; } = new();

    [JsonPropertyName("gateway")]
    public EmptyObject Gateway { get; set; } = EmptyObject.Instance;

    [JsonPropertyName("leaf")]
    public LeafVarz Leaf { get; set; } = new();

    [JsonPropertyName("mqtt")]
    public EmptyObject Mqtt { get; set; } = EmptyObject.Instance;

    [JsonPropertyName("websocket")]
    public EmptyObject Websocket { get; set; } = EmptyObject.Instance;

    [JsonPropertyName("jetstream")]
    public EmptyObject JetStream { get; set; } = EmptyObject.Instance;

    [JsonPropertyName("tls_timeout")]
    public double TlsTimeout { get; set; }

    [JsonPropertyName("write_deadline")]
    public long WriteDeadline { get; set; }

    [JsonPropertyName("start")]
    public DateTime Start { get; set; }

    [JsonPropertyName("now")]
    public DateTime Now { get; set; }

    [JsonPropertyName("uptime")]
    public string Uptime { get; set; } = "";

    [JsonPropertyName("mem")]
    public long Mem { get; set; }

    [JsonPropertyName("cores")]
    public int Cores { get; set; }

    [JsonPropertyName("gomaxprocs")]
    public int GoMaxProcs { get; set; }

    [JsonPropertyName("cpu")]
    public double Cpu { get; set; }

    [JsonPropertyName("connections")]
    public int Connections { get; set; }

    [JsonPropertyName("total_connections")]
    public long TotalConnections { get; set; }

    [JsonPropertyName("routes")]
    public int Routes { get; set; }

    [JsonPropertyName("remotes")]
    public int Remotes { get; set; }

    [JsonPropertyName("leafnodes")]
    public int Leafnodes { get; set; }

    [JsonPropertyName("in_msgs")]
    public long InMsgs { get; set; }

    [JsonPropertyName("in_bytes")]
    public long InBytes { get; set; }

    [JsonPropertyName("in_client_msgs")]
    public long InClientMsgs { get; set; }

    [JsonPropertyName("in_client_bytes")]
    public long InClientBytes { get; set; }

    [JsonPropertyName("out_msgs")]
    public long OutMsgs { get; set; }

    [JsonPropertyName("out_bytes")]
    public long OutBytes { get; set; }

    [JsonPropertyName("out_client_msgs")]
    public long OutClientMsgs { get; set; }

    [JsonPropertyName("out_client_bytes")]
    public long OutClientBytes { get; set; }

    [JsonPropertyName("slow_consumers")]
    public long SlowConsumers { get; set; }

    [JsonPropertyName("stale_connections")]
    public long StaleConnections { get; set; }

    [JsonPropertyName("stalled_clients")]
    public long StalledClients { get; set; }

    [JsonPropertyName("subscriptions")]
    public int Subscriptions { get; set; }

    [JsonPropertyName("http_req_stats")]
    public IReadOnlyDictionary<string, long> HttpRequestStats { get; set; } = new Dictionary<string, long>();

    [JsonPropertyName("config_load_time")]
    public DateTime ConfigLoadTime { get; set; }

    /// <summary>The system account's name; absent with <c>no_system_account</c> (Go's <c>omitempty</c>).</summary>
    [JsonPropertyName("system_account")]
    public string? SystemAccount { get; set; }

    [JsonPropertyName("slow_consumer_stats")]
    public ConnectionKindCounts SlowConsumerStats { get; set; } = new();

    [JsonPropertyName("stale_connection_stats")]
    public ConnectionKindCounts StaleConnectionStats { get; set; } = new();

    /// <summary>Our product version (nats-server has none; <see cref="Version"/> is the nats-server version matched).</summary>
    [JsonPropertyName("broker_version")]
    public string BrokerVersion { get; set; } = "";
}

/// <summary>Counts per connection kind (<c>SlowConsumersStats</c>, <c>StaleConnectionStats</c>).</summary>
internal sealed class ConnectionKindCounts
{
    [JsonPropertyName("clients")]
    public long Clients { get; set; }

    [JsonPropertyName("routes")]
    public long Routes { get; set; }

    [JsonPropertyName("gateways")]
    public long Gateways { get; set; }

    [JsonPropertyName("leafs")]
    public long Leafs { get; set; }
}

/// <summary>A JSON <c>{}</c>: what nats-server writes for the option blocks of features that are not configured.</summary>
internal sealed class EmptyObject
{
    public static readonly EmptyObject Instance = new();
}
