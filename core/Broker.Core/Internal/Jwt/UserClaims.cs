using System.Text.Json.Serialization;
using NATS.NKeys;

namespace Broker.Core.Internal.Jwt;

/// <summary>A user JWT, issued by its account or one of the account's signing keys (then <c>issuer_account</c> names the account).</summary>
internal sealed class UserClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public UserFields Nats { get; set; } = new();

    [JsonIgnore]
    public override INatsFields Fields => Nats;

    [JsonIgnore]
    public override string ClaimType => JwtClaimTypes.User;

    [JsonIgnore]
    public override PrefixByte IssuerPrefix => PrefixByte.Account;

    /// <summary>The account the user belongs to: <c>issuer_account</c> when signed by a signing key, else the issuer.</summary>
    [JsonIgnore]
    public string? Account => string.IsNullOrEmpty(Nats.IssuerAccount) ? Issuer : Nats.IssuerAccount;

    /// <summary>New claims for <paramref name="subject"/> with nats-io/jwt's defaults (<c>NewUserClaims</c>): subscriptions, data and payload unlimited.</summary>
    public static UserClaims Create(string subject)
    {
        var claims = new UserClaims { Subject = subject };
        claims.Nats.Subscriptions = NoLimit;
        claims.Nats.Data = NoLimit;
        claims.Nats.Payload = NoLimit;
        return claims;
    }
}

/// <summary>
/// nats-io/jwt <c>UserPermissionLimits</c>: permissions, source and time limits, NATS limits, bearer and connection
/// types, all members of one JSON object (the user's <c>nats</c>, or a scoped signing key's <c>template</c>).
/// </summary>
internal class UserPermissionLimitsClaim
{
    [JsonPropertyName("pub")]
    public PermissionClaim? Publish { get; set; }

    [JsonPropertyName("sub")]
    public PermissionClaim? Subscribe { get; set; }

    [JsonPropertyName("resp")]
    public ResponsePermissionClaim? Response { get; set; }

    /// <summary>CIDRs the user may connect from (a JSON array, or one comma-separated string as older JWTs have it).</summary>
    [JsonPropertyName("src")]
    [JsonConverter(typeof(CidrListConverter))]
    public List<string>? Source { get; set; }

    [JsonPropertyName("times")]
    public List<TimeRangeClaim>? Times { get; set; }

    /// <summary>The IANA time zone of <see cref="Times"/> (local time of the server when absent).</summary>
    [JsonPropertyName("times_location")]
    public string? Locale { get; set; }

    [JsonPropertyName("subs")]
    public long Subscriptions { get; set; }

    [JsonPropertyName("data")]
    public long Data { get; set; }

    [JsonPropertyName("payload")]
    public long Payload { get; set; }

    [JsonPropertyName("bearer_token")]
    public bool BearerToken { get; set; }

    /// <summary><c>STANDARD</c>, <c>WEBSOCKET</c>, <c>LEAFNODE</c>, <c>LEAFNODE_WS</c>, <c>MQTT</c>, <c>MQTT_WS</c>; empty = all.</summary>
    [JsonPropertyName("allowed_connection_types")]
    public List<string>? AllowedConnectionTypes { get; set; }

    /// <summary>A template with unlimited NATS limits (nats-io/jwt <c>NewUserScope</c>).</summary>
    public static UserPermissionLimitsClaim Unlimited() => new()
    {
        Subscriptions = JwtClaims.NoLimit,
        Data = JwtClaims.NoLimit,
        Payload = JwtClaims.NoLimit,
    };

    /// <summary>
    /// Whether nothing at all is set, limits included (0, not -1): what a user signed by a scoped key must be
    /// (nats-io/jwt v2.3.0 <c>HasEmptyPermissions</c>, which nats-server 2.9.10 uses, compares with the zero value).
    /// </summary>
    public bool HasEmptyPermissionsAndLimits() =>
        (Publish is null || Publish.IsEmpty) && (Subscribe is null || Subscribe.IsEmpty) && Response is null
        && (Source is null || Source.Count == 0) && (Times is null || Times.Count == 0) && string.IsNullOrEmpty(Locale)
        && Subscriptions == 0 && Data == 0 && Payload == 0
        && !BearerToken && (AllowedConnectionTypes is null || AllowedConnectionTypes.Count == 0);
}

/// <summary>The <c>nats</c> object of a user JWT.</summary>
internal sealed class UserFields : UserPermissionLimitsClaim, INatsFields
{
    [JsonPropertyName("issuer_account")]
    public string? IssuerAccount { get; set; }

    [JsonPropertyName("tags")]
    public List<string>? Tags { get; set; }

    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("version")]
    public int Version { get; set; }
}

/// <summary>Allow and deny subject lists.</summary>
internal sealed class PermissionClaim
{
    [JsonPropertyName("allow")]
    public List<string>? Allow { get; set; }

    [JsonPropertyName("deny")]
    public List<string>? Deny { get; set; }

    [JsonIgnore]
    public bool IsEmpty => (Allow is null || Allow.Count == 0) && (Deny is null || Deny.Count == 0);
}

/// <summary>Publish, subscribe and response permissions (an account's <c>default_permissions</c>).</summary>
internal sealed class PermissionsClaim
{
    [JsonPropertyName("pub")]
    public PermissionClaim? Publish { get; set; }

    [JsonPropertyName("sub")]
    public PermissionClaim? Subscribe { get; set; }

    [JsonPropertyName("resp")]
    public ResponsePermissionClaim? Response { get; set; }
}

/// <summary>Replies allowed to requests received: <c>max</c> messages within <c>ttl</c> nanoseconds.</summary>
internal sealed class ResponsePermissionClaim
{
    [JsonPropertyName("max")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public int MaxMessages { get; set; }

    [JsonPropertyName("ttl")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public long Expires { get; set; }
}

/// <summary>A daily window (<c>HH:MM:SS</c>) during which the user may connect.</summary>
internal sealed class TimeRangeClaim
{
    [JsonPropertyName("start")]
    public string? Start { get; set; }

    [JsonPropertyName("end")]
    public string? End { get; set; }
}
