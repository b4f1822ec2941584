using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Jwt;

/// <summary>
/// Source-generated JSON metadata for JWT headers and claims. Zero numbers, false and null are left out when writing,
/// as Go's <c>omitempty</c> does in nats-io/jwt (members that library always writes say so on the member).
/// </summary>
[JsonSourceGenerationOptions(DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingDefault)]
[JsonSerializable(typeof(JwtHeader))]
[JsonSerializable(typeof(OperatorClaims))]
[JsonSerializable(typeof(AccountClaims))]
[JsonSerializable(typeof(UserClaims))]
[JsonSerializable(typeof(UserScopeClaim))]
[JsonSerializable(typeof(ClaimsDigest))]
internal sealed partial class ClaimsJsonContext : JsonSerializerContext;

/// <summary>The JOSE header of a NATS JWT.</summary>
internal sealed class JwtHeader
{
    [JsonPropertyName("typ")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string? Type { get; set; }

    [JsonPropertyName("alg")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string? Algorithm { get; set; }
}

/// <summary>The registered claims alone, in nats-io/jwt's order, hashed into <c>jti</c> when encoding.</summary>
internal sealed class ClaimsDigest
{
    [JsonPropertyName("aud")]
    public string? Audience { get; set; }

    [JsonPropertyName("exp")]
    public long Expires { get; set; }

    [JsonPropertyName("iat")]
    public long IssuedAt { get; set; }

    [JsonPropertyName("iss")]
    public string? Issuer { get; set; }

    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("nbf")]
    public long NotBefore { get; set; }

    [JsonPropertyName("sub")]
    public string? Subject { get; set; }
}
