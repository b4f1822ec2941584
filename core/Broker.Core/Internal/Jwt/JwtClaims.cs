using System.Text.Json.Serialization;
using NATS.NKeys;

namespace Broker.Core.Internal.Jwt;

/// <summary>
/// The registered claims every NATS JWT carries (nats-io/jwt v2 <c>ClaimsData</c>) and the claim-type specific
/// <c>nats</c> object of the derived types. Numbers absent from a JWT read as 0, as Go's decoder leaves them; the
/// factories of the derived types set the library's "no limit" (-1) values explicitly where nsc writes them.
/// </summary>
internal abstract class JwtClaims
{
    /// <summary>nats-io/jwt <c>NoLimit</c>.</summary>
    public const long NoLimit = -1;

    [JsonPropertyName("aud")]
    public string? Audience { get; set; }

    /// <summary>Unix seconds after which the claim is expired; 0 = never.</summary>
    [JsonPropertyName("exp")]
    public long Expires { get; set; }

    [JsonPropertyName("jti")]
    public string? Id { get; set; }

    [JsonPropertyName("iat")]
    public long IssuedAt { get; set; }

    [JsonPropertyName("iss")]
    public string? Issuer { get; set; }

    [JsonPropertyName("name")]
    public string? Name { get; set; }

    /// <summary>Unix seconds before which the claim is not valid yet; 0 = always.</summary>
    [JsonPropertyName("nbf")]
    public long NotBefore { get; set; }

    [JsonPropertyName("sub")]
    public string? Subject { get; set; }

    /// <summary>The top-level <c>type</c> of a version 1 JWT (v2 keeps it in <c>nats</c>); set only on decode.</summary>
    [JsonPropertyName("type")]
    public string? Version1Type { get; set; }

    /// <summary>The <c>nats</c> object (<c>type</c>, <c>version</c>, <c>tags</c> and the claim's own fields).</summary>
    [JsonIgnore]
    public abstract INatsFields Fields { get; }

    /// <summary>The <c>nats.type</c> this claim type has: <c>operator</c>, <c>account</c>, <c>user</c>, <c>activation</c>.</summary>
    [JsonIgnore]
    public abstract string ClaimType { get; }

    /// <summary>The key type that may issue this claim (O for operators and accounts, A for users and activations).</summary>
    [JsonIgnore]
    public abstract PrefixByte IssuerPrefix { get; }
}

/// <summary>nats-io/jwt <c>GenericFields</c>: the members of <c>nats</c> every claim type has.</summary>
internal interface INatsFields
{
    List<string>? Tags { get; set; }

    string? Type { get; set; }

    int Version { get; set; }
}

/// <summary>The generic members of <c>nats</c> for claim types without permissions.</summary>
internal class NatsFields : INatsFields
{
    [JsonPropertyName("tags")]
    public List<string>? Tags { get; set; }

    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("version")]
    public int Version { get; set; }
}

/// <summary>nats-io/jwt <c>Info</c>: description and info URL of operators, accounts and exports.</summary>
internal class NatsInfoFields : NatsFields
{
    [JsonPropertyName("description")]
    public string? Description { get; set; }

    [JsonPropertyName("info_url")]
    public string? InfoUrl { get; set; }
}

/// <summary>An operator JWT (self-signed by the operator or one of its signing keys).</summary>
internal sealed class OperatorClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public OperatorFields Nats { get; set; } = new();

    [JsonIgnore]
    public override INatsFields Fields => Nats;

    [JsonIgnore]
    public override string ClaimType => JwtClaimTypes.Operator;

    [JsonIgnore]
    public override PrefixByte IssuerPrefix => PrefixByte.Operator;
}

/// <summary>The <c>nats</c> object of an operator JWT.</summary>
internal sealed class OperatorFields : NatsInfoFields
{
    [JsonPropertyName("signing_keys")]
    public List<string>? SigningKeys { get; set; }

    [JsonPropertyName("account_server_url")]
    public string? AccountServerUrl { get; set; }

    [JsonPropertyName("operator_service_urls")]
    public List<string>? OperatorServiceUrls { get; set; }

    [JsonPropertyName("system_account")]
    public string? SystemAccount { get; set; }

    [JsonPropertyName("assert_server_version")]
    public string? AssertServerVersion { get; set; }

    [JsonPropertyName("strict_signing_key_usage")]
    public bool StrictSigningKeyUsage { get; set; }
}

/// <summary>The <c>nats.type</c> values.</summary>
internal static class JwtClaimTypes
{
    public const string Operator = "operator";
    public const string Account = "account";
    public const string User = "user";
    public const string Activation = "activation";
}
