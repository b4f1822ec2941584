using System.Text.Json.Serialization;
using NATS.NKeys;

namespace Broker.Core.Internal.Jwt;

/// <summary>
/// The request of an authorization callout (nats-io/jwt <c>AuthorizationRequestClaims</c>), signed by the server's
/// key: <c>sub</c> is the callout issuer, <c>aud</c> <c>nats-authorization-request</c>.
/// </summary>
internal sealed class AuthorizationRequestClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public AuthorizationRequestFields Nats { get; set; } = new();

    [JsonIgnore]
    public override INatsFields Fields => Nats;

    [JsonIgnore]
    public override string ClaimType => "authorization_request";

    [JsonIgnore]
    public override PrefixByte IssuerPrefix => PrefixByte.Server;
}

/// <summary>The <c>nats</c> object of an authorization request.</summary>
internal sealed class AuthorizationRequestFields : NatsFields
{
    [JsonPropertyName("server_id")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public CalloutServerId Server { get; set; } = new();

    [JsonPropertyName("user_nkey")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string UserNkey { get; set; } = "";

    [JsonPropertyName("client_info")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public CalloutClientInfo ClientInfo { get; set; } = new();

    [JsonPropertyName("connect_opts")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public CalloutConnectOptions ConnectOptions { get; set; } = new();

    [JsonPropertyName("client_tls")]
    public CalloutClientTls? Tls { get; set; }

    [JsonPropertyName("request_nonce")]
    public string? RequestNonce { get; set; }
}

/// <summary>nats-io/jwt <c>ServerID</c>.</summary>
internal sealed class CalloutServerId
{
    [JsonPropertyName("name")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string Name { get; set; } = "";

    [JsonPropertyName("host")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string Host { get; set; } = "";

    [JsonPropertyName("id")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string Id { get; set; } = "";

    [JsonPropertyName("version")]
    public string? Version { get; set; }

    [JsonPropertyName("cluster")]
    public string? Cluster { get; set; }

    [JsonPropertyName("tags")]
    public List<string>? Tags { get; set; }

    [JsonPropertyName("xkey")]
    public string? XKey { get; set; }
}

/// <summary>nats-io/jwt <c>ClientInformation</c>.</summary>
internal sealed class CalloutClientInfo
{
    [JsonPropertyName("host")]
    public string? Host { get; set; }

    [JsonPropertyName("id")]
    public ulong Id { get; set; }

    [JsonPropertyName("user")]
    public string? User { get; set; }

    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("tags")]
    public List<string>? Tags { get; set; }

    [JsonPropertyName("name_tag")]
    public string? NameTag { get; set; }

    [JsonPropertyName("kind")]
    public string? Kind { get; set; }

    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("mqtt_id")]
    public string? Mqtt { get; set; }

    [JsonPropertyName("nonce")]
    public string? Nonce { get; set; }
}

/// <summary>nats-io/jwt <c>ConnectOptions</c>: what the client's CONNECT said.</summary>
internal sealed class CalloutConnectOptions
{
    [JsonPropertyName("jwt")]
    public string? Jwt { get; set; }

    [JsonPropertyName("nkey")]
    public string? Nkey { get; set; }

    [JsonPropertyName("sig")]
    public string? SignedNonce { get; set; }

    [JsonPropertyName("auth_token")]
    public string? Token { get; set; }

    [JsonPropertyName("user")]
    public string? Username { get; set; }

    [JsonPropertyName("pass")]
    public string? Password { get; set; }

    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("lang")]
    public string? Lang { get; set; }

    [JsonPropertyName("version")]
    public string? Version { get; set; }

    [JsonPropertyName("protocol")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public int Protocol { get; set; }
}

/// <summary>nats-io/jwt <c>ClientTLS</c>: the TLS session and the client's certificates, PEM-encoded.</summary>
internal sealed class CalloutClientTls
{
    [JsonPropertyName("version")]
    public string? Version { get; set; }

    [JsonPropertyName("cipher")]
    public string? Cipher { get; set; }

    [JsonPropertyName("certs")]
    public List<string>? Certs { get; set; }

    [JsonPropertyName("verified_chains")]
    public List<List<string>>? VerifiedChains { get; set; }
}

/// <summary>
/// The answer of an authorization callout service (nats-io/jwt <c>AuthorizationResponseClaims</c>), signed by the
/// callout issuer: <c>sub</c> is the request's <c>user_nkey</c>, <c>aud</c> the server id, and <c>nats</c> carries
/// either the user JWT or an error.
/// </summary>
internal sealed class AuthorizationResponseClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public AuthorizationResponseFields Nats { get; set; } = new();

    [JsonIgnore]
    public override INatsFields Fields => Nats;

    [JsonIgnore]
    public override string ClaimType => "authorization_response";

    [JsonIgnore]
    public override PrefixByte IssuerPrefix => PrefixByte.Account;
}

/// <summary>The <c>nats</c> object of an authorization response.</summary>
internal sealed class AuthorizationResponseFields : NatsFields
{
    [JsonPropertyName("jwt")]
    public string? Jwt { get; set; }

    [JsonPropertyName("error")]
    public string? Error { get; set; }

    [JsonPropertyName("issuer_account")]
    public string? IssuerAccount { get; set; }
}

/// <summary>Source-generated JSON metadata of the callout claims, written as <see cref="ClaimsJsonContext"/> writes.</summary>
[JsonSourceGenerationOptions(DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingDefault)]
[JsonSerializable(typeof(AuthorizationRequestClaims))]
[JsonSerializable(typeof(AuthorizationResponseClaims))]
internal sealed partial class AuthorizationClaimsJsonContext : JsonSerializerContext;
