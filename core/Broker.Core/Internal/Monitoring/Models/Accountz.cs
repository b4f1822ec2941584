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

    [JsonPropertyName("sublist_stats")]
    public SublistStats? SublistStats { get; set; }
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
