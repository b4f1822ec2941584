using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Monitoring.Models;

/// <summary>The <c>/accountz</c> answer (<c>monitor.go: Accountz</c>): the account list, or one account's detail.</summary>
internal sealed class Accountz
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("now")]
    public DateTime Now { get; set; }

    [JsonPropertyName("accounts")]
    public IReadOnlyList<string>? Accounts { get; set; }

    [JsonPropertyName("account_detail")]
    public AccountInfo? AccountDetail { get; set; }
}

/// <summary>One account's detail (<c>monitor.go: AccountInfo</c>), without the JWT, import and export fields we lack.</summary>
internal sealed class AccountInfo
{
    [JsonPropertyName("account_name")]
    public string AccountName { get; set; } = "";

    [JsonPropertyName("update_time")]
    public DateTime UpdateTime { get; set; }

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
