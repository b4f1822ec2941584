using System.Text.Json;
using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Monitoring.Models;

/// <summary>The <c>/accountz</c> answer (<c>monitor.go: Accountz</c>): the account list, or one account's detail.</summary>
internal sealed class Accountz
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("now")]
    public DateTime Now { get; set; }

    /// <summary>The system account's name; absent with <c>no_system_account</c>.</summary>
    [JsonPropertyName("system_account")]
    public string? SystemAccount { get; set; }

    [JsonPropertyName("accounts")]
    public IReadOnlyList<string>? Accounts { get; set; }

    [JsonPropertyName("account_detail")]
    public AccountInfo? AccountDetail { get; set; }
}

/// <summary>One account's detail (<c>monitor.go: AccountInfo</c>), without the JWT, mapping, import and export fields we lack.</summary>
internal sealed class AccountInfo
{
    [JsonPropertyName("account_name")]
    public string AccountName { get; set; } = "";

    [JsonPropertyName("update_time")]
    public DateTime UpdateTime { get; set; }

    /// <summary>Whether this is the system account; written only when true (Go's <c>omitempty</c>).</summary>
    [JsonPropertyName("is_system")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool IsSystem { get; set; }

    [JsonPropertyName("expired")]
    public bool Expired { get; set; }

    [JsonPropertyName("complete")]
    public bool Complete { get; set; } = true;

    [JsonPropertyName("jetstream_enabled")]
    public bool JetStreamEnabled { get; set; }

    [JsonPropertyName("leafnode_connections")]
    public int LeafnodeConnections { get; set; }

    [JsonPropertyName("client_connections")]
    public int ClientConnections { get; set; }

    [JsonPropertyName("subscriptions")]
    public int Subscriptions { get; set; }

    /// <summary>The account's subject mappings by source, keys sorted as Go writes a map; null (left out) when none.</summary>
    [JsonPropertyName("mappings")]
    public SortedDictionary<string, List<MapDest>>? Mappings { get; set; }

    /// <summary>The account's exports (omitted when none).</summary>
    [JsonPropertyName("exports")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<ExtExport>? Exports { get; set; }

    /// <summary>The account's imports (omitted when none).</summary>
    [JsonPropertyName("imports")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<ExtImport>? Imports { get; set; }

    /// <summary>In operator mode, the account's JWT (omitted otherwise).</summary>
    [JsonPropertyName("jwt")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Jwt { get; set; }

    /// <summary>The operator key that signed the account's JWT.</summary>
    [JsonPropertyName("issuer_key")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? IssuerKey { get; set; }

    /// <summary>The account JWT's name.</summary>
    [JsonPropertyName("name_tag")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? NameTag { get; set; }

    /// <summary>The account JWT's tags.</summary>
    [JsonPropertyName("tags")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<string>? Tags { get; set; }

    /// <summary>The account JWT's claims as JSON (the payload the JWT carries).</summary>
    [JsonPropertyName("decoded_jwt")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public System.Text.Json.JsonElement? DecodedJwt { get; set; }

    /// <summary>Revoked users to the time before which their JWTs are revoked.</summary>
    [JsonPropertyName("revoked_user")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public SortedDictionary<string, DateTime>? RevokedUser { get; set; }

    [JsonPropertyName("sublist_stats")]
    public SublistStats? SublistStats { get; set; }

    /// <summary>The routes back to requesters of the account's services, by reply (omitted when none).</summary>
    [JsonPropertyName("responses")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public SortedDictionary<string, ResponseImport>? Responses { get; set; }
}

/// <summary>One export in /accountz (nats-server's <c>ExtExport</c>: the JWT export's fields that are set).</summary>
internal sealed class ExtExport
{
    [JsonPropertyName("subject")]
    public string Subject { get; set; } = "";

    [JsonPropertyName("type")]
    public string Type { get; set; } = "stream";

    /// <summary>A service export's response type (<c>Singleton</c>, <c>Streamed</c>, <c>Chunked</c>); omitted for streams.</summary>
    [JsonPropertyName("response_type")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? ResponseType { get; set; }

    /// <summary>A tracked service export's latency (nats-server's <c>service_latency</c>); omitted when not tracked.</summary>
    [JsonPropertyName("service_latency")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ExtServiceLatency? Latency { get; set; }

    [JsonPropertyName("approved_accounts")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<string>? ApprovedAccounts { get; set; }
}

/// <summary>A service export's latency tracking as nats-io/jwt writes it: the rate (a number, or <c>headers</c>) and the results subject.</summary>
internal sealed class ExtServiceLatency
{
    [JsonPropertyName("sampling")]
    public JsonElement Sampling { get; set; }

    [JsonPropertyName("results")]
    public string Results { get; set; } = "";

    public static ExtServiceLatency? Of(Accounts.ServiceLatency? latency) => latency is null ? null : new()
    {
        Sampling = JsonDocument.Parse(latency.Sampling == 0 ? "\"headers\"" : latency.Sampling.ToString(System.Globalization.CultureInfo.InvariantCulture)).RootElement.Clone(),
        Results = latency.Results,
    };
}

/// <summary>One destination of a mapping (<c>accounts.go: MapDest</c>), with the weights summed as nats-server keeps them.</summary>
internal sealed class MapDest
{
    [JsonPropertyName("subject")]
    public string Subject { get; set; } = "";

    [JsonPropertyName("weight")]
    public int Weight { get; set; }

    [JsonPropertyName("cluster")]
    public string? Cluster { get; set; }
}

/// <summary>One import in /accountz (nats-server's <c>ExtImport</c>).</summary>
internal sealed class ExtImport
{
    [JsonPropertyName("subject")]
    public string Subject { get; set; } = "";

    [JsonPropertyName("account")]
    public string Account { get; set; } = "";

    /// <summary>A service import's subject in the exporter; omitted for streams.</summary>
    [JsonPropertyName("to")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? To { get; set; }

    [JsonPropertyName("local_subject")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? LocalSubject { get; set; }

    [JsonPropertyName("type")]
    public string Type { get; set; } = "stream";

    [JsonPropertyName("invalid")]
    public bool Invalid { get; set; }

    [JsonPropertyName("share")]
    public bool Share { get; set; }

    [JsonPropertyName("tracking")]
    public bool Tracking { get; set; }

    /// <summary>A service import of a tracked export: its latency; omitted otherwise.</summary>
    [JsonPropertyName("latency")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ExtServiceLatency? Latency { get; set; }
}

/// <summary>The <c>/accstatz</c> answer (<c>monitor.go: AccountStatz</c>).</summary>
internal sealed class AccountStatz
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("now")]
    public DateTime Now { get; set; }

    [JsonPropertyName("account_statz")]
    public IReadOnlyList<AccountStat> Accounts { get; set; } = [];
}

/// <summary>One account in <c>/accstatz</c> (<c>events.go: AccountStat</c>).</summary>
internal sealed class AccountStat
{
    [JsonPropertyName("acc")]
    public string Account { get; set; } = "";

    [JsonPropertyName("conns")]
    public int Connections { get; set; }

    [JsonPropertyName("leafnodes")]
    public int LeafNodes { get; set; }

    [JsonPropertyName("total_conns")]
    public int TotalConnections { get; set; }

    [JsonPropertyName("sent")]
    public DataStats Sent { get; set; } = new();

    [JsonPropertyName("received")]
    public DataStats Received { get; set; } = new();

    [JsonPropertyName("slow_consumers")]
    public long SlowConsumers { get; set; }
}

/// <summary>A message and byte count (<c>events.go: DataStats</c>).</summary>
internal sealed class DataStats
{
    [JsonPropertyName("msgs")]
    public long Messages { get; set; }

    [JsonPropertyName("bytes")]
    public long Bytes { get; set; }
}

/// <summary>
/// One route back in /accountz <c>responses</c>: nats-server's <c>ExtImport</c> as a map value, whose <c>type</c> Go
/// writes as the number (2, a service) since the text form needs an addressable value.
/// </summary>
internal sealed class ResponseImport
{
    [JsonPropertyName("subject")]
    public string Subject { get; set; } = "";

    [JsonPropertyName("account")]
    public string Account { get; set; } = "";

    [JsonPropertyName("to")]
    public string To { get; set; } = "";

    [JsonPropertyName("type")]
    public int Type { get; set; } = 2;

    [JsonPropertyName("invalid")]
    public bool Invalid { get; set; }

    [JsonPropertyName("share")]
    public bool Share { get; set; }

    [JsonPropertyName("tracking")]
    public bool Tracking { get; set; }

    /// <summary>The tracing headers that sampled the request (nats-server's <c>tracking_header</c>); omitted when none.</summary>
    [JsonPropertyName("tracking_header")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public SortedDictionary<string, List<string>>? TrackingHeader { get; set; }

    /// <summary>A sampled request's export latency; omitted otherwise.</summary>
    [JsonPropertyName("latency")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ExtServiceLatency? Latency { get; set; }
}
