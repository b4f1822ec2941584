using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// A route's INFO as nats-server 2.9 writes and reads it (its <c>Info</c>): ours carries no <c>lnoc</c> (so members
/// send plain RS+/RMSG, never the leaf-origin forms), no <c>jetstream</c> (the broker is no JetStream peer of the
/// cluster) and no pool fields (2.10 members then keep one route to us, as to a 2.9 server). <c>ip</c> is set in the
/// INFO one member forwards to the others about a new one (gossip); <c>connect_urls</c> are the member's client URLs.
/// </summary>
internal sealed class RouteInfo
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("server_name")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? ServerName { get; set; }

    [JsonPropertyName("version")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Version { get; set; }

    [JsonPropertyName("proto")]
    public int Proto { get; set; }

    [JsonPropertyName("host")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Host { get; set; }

    [JsonPropertyName("port")]
    public int Port { get; set; }

    [JsonPropertyName("headers")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Headers { get; set; }

    [JsonPropertyName("auth_required")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool AuthRequired { get; set; }

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

    [JsonPropertyName("nonce")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Nonce { get; set; }

    [JsonPropertyName("cluster")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Cluster { get; set; }

    [JsonPropertyName("cluster_dynamic")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Dynamic { get; set; }

    [JsonPropertyName("connect_urls")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IList<string>? ConnectUrls { get; set; }

    [JsonPropertyName("ldm")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool LameDuckMode { get; set; }

    [JsonPropertyName("import")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public Leaf.LeafInfo.SubjectPermission? Import { get; set; }

    [JsonPropertyName("export")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public Leaf.LeafInfo.SubjectPermission? Export { get; set; }

    [JsonPropertyName("gateway")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Gateway { get; set; }

    /// <summary>A copy for forwarding to other members (gossip), without the nonce.</summary>
    public RouteInfo ForGossip(string ip)
    {
        var copy = (RouteInfo)MemberwiseClone();
        copy.Nonce = null;
        copy.Ip = Ip ?? ip;
        return copy;
    }
}

/// <summary>
/// A route's CONNECT as nats-server's <c>sendRouteConnect</c> writes it: <c>name</c> is the server id. A CONNECT with
/// <c>lang</c> is a client that dialled the route port, one with <c>gateway</c> a gateway.
/// </summary>
internal sealed class RouteConnect
{
    [JsonPropertyName("echo")]
    public bool Echo { get; set; } = true;

    [JsonPropertyName("verbose")]
    public bool Verbose { get; set; }

    [JsonPropertyName("pedantic")]
    public bool Pedantic { get; set; }

    [JsonPropertyName("user")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? User { get; set; }

    [JsonPropertyName("pass")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Password { get; set; }

    [JsonPropertyName("tls_required")]
    public bool TlsRequired { get; set; }

    [JsonPropertyName("headers")]
    public bool Headers { get; set; }

    [JsonPropertyName("name")]
    public string Name { get; set; } = "";

    [JsonPropertyName("cluster")]
    public string Cluster { get; set; } = "";

    [JsonPropertyName("cluster_dynamic")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Dynamic { get; set; }

    [JsonPropertyName("lang")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Lang { get; set; }

    [JsonPropertyName("gateway")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Gateway { get; set; }
}

[JsonSerializable(typeof(RouteInfo))]
[JsonSerializable(typeof(RouteConnect))]
internal sealed partial class RouteJsonContext : JsonSerializerContext;
