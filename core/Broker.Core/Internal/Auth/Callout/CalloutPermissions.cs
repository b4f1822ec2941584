using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>
/// The permissions of a client the callout authorized (nats-server <c>buildInternalNkeyUser</c> and
/// <c>buildPermissionsFromJwt</c>): the user JWT's pub/sub allow and deny lists and <c>resp</c>, or the placement
/// account's <c>default_permissions</c> when the JWT has none; a client in the callout account may not publish to
/// <c>$SYS.REQ.USER.AUTH</c> (<c>mergeDenyPermissions</c>), auth users included.
/// </summary>
internal static class CalloutPermissions
{
    // nats-server's connection types of 2.10 (jwt.ConnectionType*).
    private static readonly HashSet<string> ConnectionTypes = new(StringComparer.Ordinal) { "STANDARD", "WEBSOCKET", "LEAFNODE", "LEAFNODE_WS", "MQTT", "MQTT_WS" };

    /// <summary>
    /// nats-server's <c>convertAllowedConnectionTypes</c> as the callout uses it: a list naming only types this
    /// version does not know would allow every type (empty), so it is refused.
    /// </summary>
    public static bool HasValidConnectionTypes(UserPermissionLimitsClaim limits) =>
        limits.AllowedConnectionTypes is not { Count: > 0 } types || types.Any(t => ConnectionTypes.Contains(t.ToUpperInvariant()));

    /// <summary>The permissions options of a user JWT, or null when it sets none.</summary>
    public static PermissionsOptions? FromClaims(UserPermissionLimitsClaim limits)
    {
        PermissionsOptions? permissions = null;
        if (limits.Publish is { IsEmpty: false } publish)
        {
            permissions = new PermissionsOptions { Publish = Lists(publish) };
        }

        if (limits.Subscribe is { IsEmpty: false } subscribe)
        {
            permissions ??= new PermissionsOptions();
            permissions.Subscribe = Lists(subscribe);
        }

        if (limits.Response is { } response)
        {
            // validateResponsePermissions: 0 means the defaults (1 reply, 2 minutes), a negative value no limit;
            // responses without a publish list leave publishing only responses.
            permissions ??= new PermissionsOptions();
            permissions.AllowResponses = new ResponsePermissionOptions
            {
                MaxMessages = response.MaxMessages == 0 ? 1 : response.MaxMessages,
                Expires = response.Expires == 0 ? TimeSpan.FromMinutes(2) : TimeSpan.FromTicks(response.Expires / 100),
            };
            permissions.Publish ??= new SubjectPermissionOptions();
        }

        return permissions;
    }

    /// <summary><paramref name="permissions"/> (null = full) with publishing to <paramref name="subject"/> denied too.</summary>
    public static PermissionsOptions DenyPublish(PermissionsOptions? permissions, string subject)
    {
        var merged = permissions?.Clone() ?? new PermissionsOptions();
        merged.Publish ??= new SubjectPermissionOptions();
        if (!merged.Publish.Deny.Contains(subject))
        {
            merged.Publish.Deny.Add(subject);
        }

        return merged;
    }

    /// <summary>
    /// The permissions options a configured user (named by user name or NKey) has: its own, or its account's default
    /// permissions (<c>authorization</c>'s for users of <c>$G</c>); null when it has full permissions or is not found.
    /// </summary>
    public static PermissionsOptions? OfConfiguredUser(BrokerOptions options, string name)
    {
        foreach (var user in options.Authorization.Users)
        {
            if (Names(user, name))
            {
                return user.Permissions ?? options.Authorization.DefaultPermissions;
            }
        }

        foreach (var account in options.Accounts)
        {
            foreach (var user in account.Users)
            {
                if (Names(user, name))
                {
                    return user.Permissions ?? account.DefaultPermissions;
                }
            }
        }

        return null;

        static bool Names(UserOptions user, string name) => user.Nkey is null ? user.User == name : user.Nkey == name;
    }

    /// <summary>The <c>default_permissions</c> of the account named <paramref name="account"/>, if it has any.</summary>
    public static PermissionsOptions? AccountDefaults(BrokerOptions options, string account) =>
        options.Accounts.FirstOrDefault(a => a.Name == account)?.DefaultPermissions;

    private static SubjectPermissionOptions Lists(PermissionClaim claim) => new() { Allow = [.. claim.Allow ?? []], Deny = [.. claim.Deny ?? []] };
}
