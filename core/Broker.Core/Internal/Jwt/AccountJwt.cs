using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Auth;

namespace Broker.Core.Internal.Jwt;

/// <summary>
/// An account's verified JWT and what the broker takes from it (nats-server <c>updateAccountClaimsWithRefresh</c>):
/// limits, JetStream limits, default permissions, signing keys, revocations, whether bearer tokens are refused.
/// Immutable; an account holds the one in force.
/// </summary>
internal sealed class AccountJwt
{
    private AccountJwt(string token, AccountClaims claims, PermissionsTemplate? defaultPermissions)
    {
        Token = token;
        Claims = claims;
        DefaultPermissions = defaultPermissions;
    }

    /// <summary>The JWT as the resolver holds it (/accountz <c>jwt</c>).</summary>
    public string Token { get; }

    public AccountClaims Claims { get; }

    /// <summary>Permissions of the account's users whose JWT has none, or null for full permissions.</summary>
    public PermissionsTemplate? DefaultPermissions { get; }

    /// <summary>The operator key that signed the account (/accountz <c>issuer_key</c>).</summary>
    public string Issuer => Claims.Issuer!;

    /// <summary>The account's authorization callout when its JWT enables one (<c>hasExternalAuth</c>), else null.</summary>
    public ExternalAuthorizationClaim? Callout => Claims.Nats.Authorization is { IsEnabled: true } callout ? callout : null;

    /// <summary>Whether users with <c>bearer_token</c> are refused (<c>limits.disallow_bearer</c>).</summary>
    public bool DisallowBearer => Claims.Nats.Limits.DisallowBearer;

    /// <summary>Compiles a decoded and verified account JWT.</summary>
    /// <exception cref="InvalidOperationException">A permission subject of <c>default_permissions</c> is malformed.</exception>
    public static AccountJwt Create(string token, AccountClaims claims, TimeProvider time) =>
        new(token, claims, UserPermissions.Compile(claims.Nats.DefaultPermissions?.Publish, claims.Nats.DefaultPermissions?.Subscribe, claims.Nats.DefaultPermissions?.Response, time));

    /// <summary>
    /// Whether <paramref name="key"/> may sign the account's users: the account itself, or one of its signing keys
    /// (<paramref name="scope"/> set when the key is scoped).
    /// </summary>
    public bool HasIssuer(string key, out UserScopeClaim? scope)
    {
        scope = null;
        if (key == Claims.Subject)
        {
            return true;
        }

        return Claims.Nats.SigningKeys is { } keys && keys.TryGetValue(key, out scope);
    }

    /// <summary>Whether a user JWT of <paramref name="user"/> issued at <paramref name="issuedAt"/> is revoked.</summary>
    public bool IsRevoked(string user, long issuedAt) => ClaimsValidator.IsRevoked(Claims.Nats.Revocations, user, issuedAt);

    /// <summary>The account's connection, subscription, payload and leaf limits; a 0 stays 0, as nats-server reads it.</summary>
    public AccountLimits Limits()
    {
        var limits = Claims.Nats.Limits;
        return new AccountLimits(ToInt(limits.Connections), ToInt(limits.Subscriptions), ToInt(limits.Payload), ToInt(limits.LeafNodeConnections));
    }

    /// <summary>
    /// The account's subject mappings (nats-server <c>AddWeightedMappings</c> for each of the JWT's <c>mappings</c>, a
    /// weight of 0 read as 100), or null when none; a mapping nats-server would refuse is left out, as it logs and
    /// skips it.
    /// </summary>
    public SubjectMapper? Mappings()
    {
        var valid = new List<MappingOptions>();
        foreach (var (source, destinations) in Claims.Nats.Mappings ?? [])
        {
            var options = new MappingOptions
            {
                Source = source,
                Destinations = [.. (destinations ?? []).Select(d => new MappingDestinationOptions
                {
                    Subject = d.Subject ?? string.Empty,
                    Weight = d.Weight == 0 ? 100 : d.Weight,
                    Cluster = string.IsNullOrEmpty(d.Cluster) ? null : d.Cluster,
                })],
            };
            try
            {
                options.Validate();
                valid.Add(options);
            }
            catch (InvalidOperationException)
            {
                // Left out, as nats-server's updateAccountClaimsWithRefresh ignores AddWeightedMappings' error.
            }
        }

        return SubjectMapper.Create(valid);
    }

    /// <summary>
    /// The account's JetStream limits, or null when its JWT leaves JetStream disabled: the plain limits when they set
    /// memory or disk storage, else an <c>R1</c> tier (the only tier a single server uses).
    /// </summary>
    public AccountJetStreamLimits? JetStream()
    {
        var limits = Claims.Nats.Limits;
        JetStreamLimitsClaim? chosen = limits.MemoryStorage != 0 || limits.DiskStorage != 0
            ? limits
            : limits.TieredLimits is { } tiers && tiers.TryGetValue("R1", out var r1) && (r1.MemoryStorage != 0 || r1.DiskStorage != 0) ? r1 : null;
        if (chosen is null)
        {
            return null;
        }

        return new AccountJetStreamLimits
        {
            MaxMemory = chosen.MemoryStorage,
            MaxStorage = chosen.DiskStorage,
            MaxStreams = ToInt(chosen.Streams),
            MaxConsumers = ToInt(chosen.Consumers),
            MaxAckPending = ToInt(Unlimited(chosen.MaxAckPending)),
            MemoryMaxStreamBytes = Unlimited(chosen.MemoryMaxStreamBytes),
            StorageMaxStreamBytes = Unlimited(chosen.DiskMaxStreamBytes),
            MaxBytesRequired = chosen.MaxBytesRequired,
        };

        // nats-server's toUnlimited: these three are unlimited unless positive.
        static long Unlimited(long value) => value > 0 ? value : -1;
    }

    internal static int ToInt(long value) => value > int.MaxValue ? int.MaxValue : value < -1 ? -1 : (int)value;
}

/// <summary>Permissions from JWT claims (nats-server <c>buildPermissionsFromJwt</c>): null when they set nothing.</summary>
internal static class UserPermissions
{
    /// <exception cref="InvalidOperationException">A subject is malformed.</exception>
    public static PermissionsTemplate? Compile(PermissionClaim? publish, PermissionClaim? subscribe, ResponsePermissionClaim? response, TimeProvider time)
    {
        var options = ToOptions(publish, subscribe, response);
        return options is null ? null : PermissionsTemplate.Compile(options, time);
    }

    public static PermissionsOptions? ToOptions(PermissionClaim? publish, PermissionClaim? subscribe, ResponsePermissionClaim? response)
    {
        PermissionsOptions? options = null;
        if (publish is { IsEmpty: false })
        {
            options = new PermissionsOptions { Publish = ToSubjects(publish) };
        }

        if (subscribe is { IsEmpty: false })
        {
            options ??= new PermissionsOptions();
            options.Subscribe = ToSubjects(subscribe);
        }

        if (response is not null)
        {
            options ??= new PermissionsOptions();

            // nats-server validateResponsePermissions: 0 messages means the default 1, 0 expiry the default 2 minutes.
            var defaults = new ResponsePermissionOptions();
            options.AllowResponses = new ResponsePermissionOptions
            {
                MaxMessages = response.MaxMessages == 0 ? defaults.MaxMessages : response.MaxMessages,
                Expires = response.Expires == 0 ? defaults.Expires : TimeSpan.FromTicks(response.Expires / 100),
            };
        }

        return options;
    }

    private static SubjectPermissionOptions ToSubjects(PermissionClaim claim) => new()
    {
        Allow = [.. claim.Allow ?? []],
        Deny = [.. claim.Deny ?? []],
    };
}
