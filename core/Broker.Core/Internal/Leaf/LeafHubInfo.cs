using System.Text.Json;
using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The INFO a hub sends a spoke (nats-server's <c>Info</c> as <c>startLeafNodeAcceptLoop</c> fills it, in its field
/// order): the first one with <c>client_id</c>, <c>nonce</c> and <c>leafnode_urls</c> (a spoke closes a link whose
/// first INFO lacks them), and after the CONNECT the connect-info one (<c>connect_info</c>, the leaf user's
/// <c>import</c>/<c>export</c> permissions, <c>remote_account</c>); both with the hub's JetStream <c>domain</c>.
/// </summary>
internal sealed class LeafHubInfo
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = string.Empty;

    [JsonPropertyName("server_name")]
    public string ServerName { get; set; } = string.Empty;

    [JsonPropertyName("version")]
    public string Version { get; set; } = Protocol.ServerInfo.CompatibleServerVersion;

    [JsonPropertyName("proto")]
    public int Proto { get; set; } = 1;

    [JsonPropertyName("go")]
    public string Go { get; set; } = ".NET " + Environment.Version;

    [JsonPropertyName("host")]
    public string Host { get; set; } = string.Empty;

    [JsonPropertyName("port")]
    public int Port { get; set; }

    [JsonPropertyName("headers")]
    public bool Headers { get; set; }

    [JsonPropertyName("auth_required")]
    public bool AuthRequired { get; set; } = true;

    [JsonPropertyName("tls_required")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool TlsRequired { get; set; }

    [JsonPropertyName("tls_verify")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool TlsVerify { get; set; }

    [JsonPropertyName("max_payload")]
    public int MaxPayload { get; set; }

    [JsonPropertyName("jetstream")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool JetStream { get; set; }

    [JsonPropertyName("ip")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Ip { get; set; }

    [JsonPropertyName("client_id")]
    public ulong ClientId { get; set; }

    [JsonPropertyName("nonce")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Nonce { get; set; }

    /// <summary>The hub's JetStream domain (nats-server's <c>leafNodeInfo</c> sends <c>opts.JetStreamDomain</c>): a spoke of another domain keeps its own domain's API from crossing.</summary>
    [JsonPropertyName("domain")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Domain { get; set; }

    [JsonPropertyName("import")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public LeafInfo.SubjectPermission? Import { get; set; }

    [JsonPropertyName("export")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public LeafInfo.SubjectPermission? Export { get; set; }

    [JsonPropertyName("info_on_connect")]
    public bool InfoOnConnect { get; set; } = true;

    [JsonPropertyName("connect_info")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool ConnectInfo { get; set; }

    [JsonPropertyName("leafnode_urls")]
    public List<string> LeafNodeUrls { get; set; } = [];

    [JsonPropertyName("remote_account")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? RemoteAccount { get; set; }

    public LeafHubInfo Clone() => (LeafHubInfo)MemberwiseClone();

    /// <summary>The protocol line as nats-server writes it: <c>INFO {json} \r\n</c> (a space before the line end).</summary>
    public byte[] ToProtocolLine()
    {
        var json = JsonSerializer.SerializeToUtf8Bytes(this, LeafJsonContext.Default.LeafHubInfo);
        return [.. "INFO "u8, .. json, .. " \r\n"u8];
    }
}
