using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The fields a spoke reads from a hub's INFO (nats-server's <c>Info</c>): the first one (<c>client_id</c>,
/// <c>nonce</c>, <c>leafnode_urls</c>, <c>ws_connect_urls</c>), the connect-info one (<c>connect_info</c>, <c>import</c>, <c>export</c>,
/// <c>remote_account</c>) and later asynchronous ones (new <c>leafnode_urls</c>).
/// </summary>
internal sealed class LeafInfo
{
    [JsonPropertyName("server_id")]
    public string? ServerId { get; set; }

    [JsonPropertyName("server_name")]
    public string? ServerName { get; set; }

    [JsonPropertyName("version")]
    public string? Version { get; set; }

    [JsonPropertyName("cluster")]
    public string? Cluster { get; set; }

    [JsonPropertyName("domain")]
    public string? Domain { get; set; }

    [JsonPropertyName("headers")]
    public bool Headers { get; set; }

    [JsonPropertyName("tls_required")]
    public bool TlsRequired { get; set; }

    [JsonPropertyName("client_id")]
    public ulong ClientId { get; set; }

    [JsonPropertyName("nonce")]
    public string? Nonce { get; set; }

    [JsonPropertyName("leafnode_urls")]
    public List<string>? LeafNodeUrls { get; set; }

    [JsonPropertyName("ws_connect_urls")]
    public List<string>? WebSocketConnectUrls { get; set; }

    [JsonPropertyName("info_on_connect")]
    public bool InfoOnConnect { get; set; }

    [JsonPropertyName("connect_info")]
    public bool ConnectInfo { get; set; }

    [JsonPropertyName("import")]
    public SubjectPermission? Import { get; set; }

    [JsonPropertyName("export")]
    public SubjectPermission? Export { get; set; }

    [JsonPropertyName("remote_account")]
    public string? RemoteAccount { get; set; }

    [JsonPropertyName("max_payload")]
    public int MaxPayload { get; set; }

    /// <summary>One direction's allow and deny lists (nats-server's <c>SubjectPermission</c>).</summary>
    internal sealed class SubjectPermission
    {
        [JsonPropertyName("allow")]
        [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
        public List<string>? Allow { get; set; }

        [JsonPropertyName("deny")]
        [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
        public List<string>? Deny { get; set; }

        /// <summary>The wire form of configured lists; null when there are none (Go's <c>omitempty</c>).</summary>
        public static SubjectPermission? From(Broker.Core.Auth.SubjectPermissionOptions? permission) =>
            permission is null || (permission.Allow.Count == 0 && permission.Deny.Count == 0)
                ? null
                : new SubjectPermission { Allow = permission.Allow.Count > 0 ? [.. permission.Allow] : null, Deny = permission.Deny.Count > 0 ? [.. permission.Deny] : null };
    }
}

/// <summary>
/// The CONNECT a spoke sends (nats-server 2.9's <c>leafConnectInfo</c>): no <c>lang</c>, which a hub takes for a client
/// that dialled the leaf port; credentials as a user JWT with the nonce signed, or a user and password. The hub reads
/// the same, with the fields only other spokes send (<c>cluster</c>, <c>is_hub</c>, <c>nkey</c>, <c>auth_token</c>, ...).
/// </summary>
internal sealed class LeafConnect
{
    [JsonPropertyName("version")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Version { get; set; }

    [JsonPropertyName("jwt")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Jwt { get; set; }

    [JsonPropertyName("sig")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Signature { get; set; }

    [JsonPropertyName("user")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? User { get; set; }

    [JsonPropertyName("pass")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Password { get; set; }

    [JsonPropertyName("tls_required")]
    public bool TlsRequired { get; set; }

    [JsonPropertyName("server_id")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? ServerId { get; set; }

    /// <summary>The JetStream domain this server serves.</summary>
    [JsonPropertyName("domain")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Domain { get; set; }

    [JsonPropertyName("name")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Name { get; set; }

    [JsonPropertyName("headers")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Headers { get; set; }

    /// <summary>Whether the link's account has JetStream (nats-server's <c>jetStreamConfigured</c>).</summary>
    [JsonPropertyName("jetstream")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool JetStream { get; set; }

    [JsonPropertyName("deny_pub")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IList<string>? DenyPublish { get; set; }

    [JsonPropertyName("cluster")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Cluster { get; set; }

    [JsonPropertyName("is_hub")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool IsHub { get; set; }

    [JsonPropertyName("gateway")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Gateway { get; set; }

    [JsonPropertyName("lang")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Lang { get; set; }

    [JsonPropertyName("nkey")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Nkey { get; set; }

    [JsonPropertyName("auth_token")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? AuthToken { get; set; }
}

[JsonSerializable(typeof(LeafInfo))]
[JsonSerializable(typeof(LeafConnect))]
[JsonSerializable(typeof(LeafHubInfo))]
internal sealed partial class LeafJsonContext : JsonSerializerContext;
