using System.Text.Json.Serialization;
using NATS.NKeys;

namespace Broker.Core.Internal.Jwt;

/// <summary>An account JWT, issued by the operator or one of its signing keys.</summary>
internal sealed class AccountClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public AccountFields Nats { get; set; } = new();

    [JsonIgnore]
    public override INatsFields Fields => Nats;

    [JsonIgnore]
    public override string ClaimType => JwtClaimTypes.Account;

    [JsonIgnore]
    public override PrefixByte IssuerPrefix => PrefixByte.Operator;

    /// <summary>
    /// New claims for <paramref name="subject"/> with nats-io/jwt's defaults (<c>NewAccountClaims</c>): connection,
    /// subscription, data, payload, import, export and leaf limits unlimited, wildcard exports allowed, JetStream
    /// disabled.
    /// </summary>
    public static AccountClaims Create(string subject) => new()
    {
        Subject = subject,
        Nats = new AccountFields
        {
            Limits = new AccountLimitsClaim
            {
                Subscriptions = NoLimit,
                Data = NoLimit,
                Payload = NoLimit,
                Imports = NoLimit,
                Exports = NoLimit,
                WildcardExports = true,
                Connections = NoLimit,
                LeafNodeConnections = NoLimit,
            },
        },
    };
}

/// <summary>The <c>nats</c> object of an account JWT.</summary>
internal sealed class AccountFields : NatsInfoFields
{
    [JsonPropertyName("imports")]
    public List<ImportClaim>? Imports { get; set; }

    [JsonPropertyName("exports")]
    public List<ExportClaim>? Exports { get; set; }

    [JsonPropertyName("limits")]
    public AccountLimitsClaim Limits { get; set; } = new();

    /// <summary>Signing keys: a plain key maps to <see langword="null"/>, a scoped key to its scope.</summary>
    [JsonPropertyName("signing_keys")]
    [JsonConverter(typeof(SigningKeysConverter))]
    public Dictionary<string, UserScopeClaim?>? SigningKeys { get; set; }

    /// <summary>User public keys (or <c>*</c> for all) to the unix second before which their JWTs were issued revoked.</summary>
    [JsonPropertyName("revocations")]
    public Dictionary<string, long>? Revocations { get; set; }

    [JsonPropertyName("default_permissions")]
    public PermissionsClaim? DefaultPermissions { get; set; }

    [JsonPropertyName("mappings")]
    public Dictionary<string, List<WeightedMappingClaim>>? Mappings { get; set; }

    /// <summary>The account's authorization callout (nats-io/jwt 2.5 <c>ExternalAuthorization</c>), or null.</summary>
    [JsonPropertyName("authorization")]
    public ExternalAuthorizationClaim? Authorization { get; set; }
}

/// <summary>
/// nats-io/jwt <c>ExternalAuthorization</c>: the account's users (other than <c>auth_users</c>) are decided by a callout
/// service running as one of <c>auth_users</c>; it may place them in <c>allowed_accounts</c> (<c>*</c>: any); requests
/// are sealed for <c>xkey</c> when set. Enabled when <c>auth_users</c> is not empty.
/// </summary>
internal sealed class ExternalAuthorizationClaim
{
    /// <summary>Any account (<c>jwt.AnyAccount</c>).</summary>
    public const string AnyAccount = "*";

    [JsonPropertyName("auth_users")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public List<string>? AuthUsers { get; set; }

    [JsonPropertyName("allowed_accounts")]
    public List<string>? AllowedAccounts { get; set; }

    [JsonPropertyName("xkey")]
    public string? XKey { get; set; }

    /// <summary>Whether the callout is on (<c>IsEnabled</c>).</summary>
    [JsonIgnore]
    public bool IsEnabled => AuthUsers is { Count: > 0 };

    /// <summary>nats-io/jwt <c>ExternalAuthorization.Validate</c>: the first issue, or null.</summary>
    public string? Validate()
    {
        var users = AuthUsers ?? [];
        var accounts = AllowedAccounts ?? [];
        if (accounts.Count > 0 && users.Count == 0)
        {
            return "External authorization cannot have accounts without users specified";
        }

        if (users.Find(u => !IsKey(u, PrefixByte.User)) is { } user)
        {
            return $"AuthUser \"{user}\" is not a valid user public key";
        }

        foreach (var account in accounts)
        {
            if (account == AnyAccount && accounts.Count > 1)
            {
                return $"AllowedAccounts can only be a list of accounts or \"{AnyAccount}\"";
            }

            if (account != AnyAccount && !IsKey(account, PrefixByte.Account))
            {
                return $"Account \"{account}\" is not a valid account public key";
            }
        }

        return !string.IsNullOrEmpty(XKey) && !IsKey(XKey, PrefixByte.Curve) ? $"XKey \"{XKey}\" is not a valid public xkey" : null;
    }

    /// <summary>Whether the callout may place users in <paramref name="account"/> (<c>isAllowedAcount</c>).</summary>
    public bool Allows(string account) =>
        AllowedAccounts is { } accounts && ((accounts.Count == 1 && accounts[0] == AnyAccount) || accounts.Contains(account));

    private static bool IsKey(string key, PrefixByte prefix) => JwtToken.IsPublicKey(key, prefix);
}

/// <summary>
/// nats-io/jwt <c>OperatorLimits</c>: the NATS limits, account limits and JetStream limits side by side in one JSON
/// object, and <c>tiered_limits</c> (JetStream limits per tier, <c>R1</c>, <c>R3</c>).
/// </summary>
internal sealed class AccountLimitsClaim : JetStreamLimitsClaim
{
    [JsonPropertyName("subs")]
    public long Subscriptions { get; set; }

    [JsonPropertyName("data")]
    public long Data { get; set; }

    [JsonPropertyName("payload")]
    public long Payload { get; set; }

    [JsonPropertyName("imports")]
    public long Imports { get; set; }

    [JsonPropertyName("exports")]
    public long Exports { get; set; }

    [JsonPropertyName("wildcards")]
    public bool WildcardExports { get; set; }

    [JsonPropertyName("disallow_bearer")]
    public bool DisallowBearer { get; set; }

    [JsonPropertyName("conn")]
    public long Connections { get; set; }

    [JsonPropertyName("leaf")]
    public long LeafNodeConnections { get; set; }

    [JsonPropertyName("tiered_limits")]
    public Dictionary<string, JetStreamLimitsClaim>? TieredLimits { get; set; }
}

/// <summary>nats-io/jwt <c>JetStreamLimits</c>: 0 storage means JetStream disabled, -1 unlimited.</summary>
internal class JetStreamLimitsClaim
{
    [JsonPropertyName("mem_storage")]
    public long MemoryStorage { get; set; }

    [JsonPropertyName("disk_storage")]
    public long DiskStorage { get; set; }

    [JsonPropertyName("streams")]
    public long Streams { get; set; }

    [JsonPropertyName("consumer")]
    public long Consumers { get; set; }

    [JsonPropertyName("max_ack_pending")]
    public long MaxAckPending { get; set; }

    [JsonPropertyName("mem_max_stream_bytes")]
    public long MemoryMaxStreamBytes { get; set; }

    [JsonPropertyName("disk_max_stream_bytes")]
    public long DiskMaxStreamBytes { get; set; }

    [JsonPropertyName("max_bytes_required")]
    public bool MaxBytesRequired { get; set; }
}

/// <summary>One import of an account JWT.</summary>
internal sealed class ImportClaim
{
    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("subject")]
    public string? Subject { get; set; }

    [JsonPropertyName("account")]
    public string? Account { get; set; }

    /// <summary>An activation JWT for a private export.</summary>
    [JsonPropertyName("token")]
    public string? Token { get; set; }

    [JsonPropertyName("to")]
    public string? To { get; set; }

    [JsonPropertyName("local_subject")]
    public string? LocalSubject { get; set; }

    /// <summary><c>stream</c> or <c>service</c>.</summary>
    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("share")]
    public bool Share { get; set; }
}

/// <summary>One export of an account JWT.</summary>
internal sealed class ExportClaim
{
    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("subject")]
    public string? Subject { get; set; }

    /// <summary><c>stream</c> or <c>service</c>.</summary>
    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("token_req")]
    public bool TokenRequired { get; set; }

    [JsonPropertyName("revocations")]
    public Dictionary<string, long>? Revocations { get; set; }

    /// <summary><c>Singleton</c>, <c>Stream</c> or <c>Chunked</c>.</summary>
    [JsonPropertyName("response_type")]
    public string? ResponseType { get; set; }

    /// <summary>Nanoseconds (Go's <c>time.Duration</c>).</summary>
    [JsonPropertyName("response_threshold")]
    public long ResponseThreshold { get; set; }

    [JsonPropertyName("service_latency")]
    public ServiceLatencyClaim? Latency { get; set; }

    [JsonPropertyName("account_token_position")]
    public uint AccountTokenPosition { get; set; }

    [JsonPropertyName("advertise")]
    public bool Advertise { get; set; }

    [JsonPropertyName("description")]
    public string? Description { get; set; }

    [JsonPropertyName("info_url")]
    public string? InfoUrl { get; set; }
}

/// <summary>Latency tracking of a service export: <c>sampling</c> is a percentage or the text <c>headers</c>.</summary>
internal sealed class ServiceLatencyClaim
{
    [JsonPropertyName("sampling")]
    public System.Text.Json.JsonElement? Sampling { get; set; }

    [JsonPropertyName("results")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string? Results { get; set; }
}

/// <summary>One destination of a mapping in an account JWT.</summary>
internal sealed class WeightedMappingClaim
{
    [JsonPropertyName("subject")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string? Subject { get; set; }

    [JsonPropertyName("weight")]
    public byte Weight { get; set; }

    [JsonPropertyName("cluster")]
    public string? Cluster { get; set; }
}

/// <summary>
/// A scoped signing key (<c>kind</c> <c>user_scope</c>): users it signs get <see cref="Template"/>'s permissions and
/// limits, and may carry none of their own.
/// </summary>
internal sealed class UserScopeClaim
{
    [JsonPropertyName("kind")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string Kind { get; set; } = "user_scope";

    [JsonPropertyName("key")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string Key { get; set; } = "";

    [JsonPropertyName("role")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public string? Role { get; set; }

    [JsonPropertyName("template")]
    [JsonIgnore(Condition = JsonIgnoreCondition.Never)]
    public UserPermissionLimitsClaim Template { get; set; } = UserPermissionLimitsClaim.Unlimited();
}
