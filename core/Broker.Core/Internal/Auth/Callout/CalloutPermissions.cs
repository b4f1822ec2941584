using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>
/// The permissions of a client the callout authorized (nats-server <c>buildInternalNkeyUser</c>): the user JWT's
/// (<see cref="UserPermissions"/>), or the placement account's <c>default_permissions</c> when the JWT has none; a client
/// in the callout account may not publish to <c>$SYS.REQ.USER.AUTH</c> (<c>mergeDenyPermissions</c>), auth users
/// included.
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

    /// <summary>Compiled <paramref name="permissions"/> (null = full) with publishing to <paramref name="subject"/> denied too.</summary>
    public static PermissionsTemplate DenyPublish(PermissionsTemplate? permissions, string subject) =>
        permissions is null
            ? PermissionsTemplate.Compile(DenyPublish((PermissionsOptions?)null, subject))
            : PermissionsTemplate.Compile(DenyPublish(permissions.Source, subject), permissions.Time, permissions.MaxTrackedReplies);

    /// <summary>The <c>default_permissions</c> of the configured account named <paramref name="account"/>, compiled, if it has any.</summary>
    /// <exception cref="InvalidOperationException">A subject is malformed.</exception>
    public static PermissionsTemplate? AccountDefaults(BrokerOptions options, string account) =>
        options.Accounts.FirstOrDefault(a => a.Name == account)?.DefaultPermissions is { } permissions ? PermissionsTemplate.Compile(permissions) : null;
}
