using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfKeys;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// The <c>authorization</c> block and <c>no_auth_user</c> (nats-server opts.go parseAuthorization) onto
/// <see cref="AuthorizationOptions"/> keys, with nats-server's checks of the combinations: a user/password or a
/// token or a users array (here or in accounts read before), users without duplicates across the file.
/// <c>no_auth_user</c> may name a user of this block or of any account; the broker's options check that it exists,
/// as nats-server does when it starts (not with <c>-t</c>).
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
/// <param name="users">Reads the users array, as for accounts.</param>
/// <param name="permissions">Reads the default permissions.</param>
/// <param name="known">The users of the whole file so far.</param>
internal sealed class AuthorizationMapper(ConfValueReader reader, ConfMappingBuilder output, UsersMapper users, PermissionsMapper permissions, ConfiguredUsers known)
{
    /// <summary>Whether <paramref name="key"/> (any letter case) is one of the top-level keys read here.</summary>
    public static bool Reads(string key) =>
        string.Equals(key, "authorization", StringComparison.OrdinalIgnoreCase) || string.Equals(key, "no_auth_user", StringComparison.OrdinalIgnoreCase);

    /// <summary>Maps a top-level entry if it is <c>authorization</c> or <c>no_auth_user</c>.</summary>
    /// <returns>Whether it was.</returns>
    public bool TryMap(ConfEntry entry)
    {
        if (string.Equals(entry.Key, "authorization", StringComparison.OrdinalIgnoreCase))
        {
            MapBlock(entry);
            return true;
        }

        if (string.Equals(entry.Key, "no_auth_user", StringComparison.OrdinalIgnoreCase))
        {
            reader.SetString(entry, Authorization(nameof(AuthorizationOptions.NoAuthUser)));
            return true;
        }

        return false;
    }

    private void MapBlock(ConfEntry entry)
    {
        if (!reader.TryMap(entry, out var block))
        {
            return;
        }

        var hasUser = false;
        var hasToken = false;
        List<ConfiguredUser>? blockUsers = null;
        foreach (var item in block.Entries)
        {
            switch (item.Key.ToLowerInvariant())
            {
                case "user" or "username":
                    reader.SetString(item, Authorization(nameof(AuthorizationOptions.User)));
                    hasUser = true;
                    break;
                case "pass" or "password":
                    reader.SetString(item, Authorization(nameof(AuthorizationOptions.Password)));
                    hasUser = true;
                    break;
                case "token":
                    reader.SetString(item, Authorization(nameof(AuthorizationOptions.Token)));
                    hasToken = true;
                    break;
                case "timeout":
                    Timeout(item, Authorization(nameof(AuthorizationOptions.Timeout)));
                    break;
                case "users":
                    blockUsers = users.Map(item, Authorization(nameof(AuthorizationOptions.Users)));
                    break;
                case "default_permission" or "default_permissions" or "permissions":
                    permissions.Map(item, Authorization(nameof(AuthorizationOptions.DefaultPermissions)));
                    break;
                case "auth_callout" or "auth_hook":
                    new AuthCalloutMapper(reader, output).Map(item);
                    break;
                case "proxy_required":
                    reader.Forbidden(item, "trusted proxies");
                    break;
                default:
                    reader.Unknown(item);
                    break;
            }
        }

        // nats-server's checks, reported at the block; users of accounts read before count as a users array.
        var hasUsers = blockUsers is not null || known.Any;
        if (hasUser && hasToken)
        {
            output.Error(entry.KeyPosition, "Cannot have a user/pass and token");
        }
        else if (hasUsers && hasUser)
        {
            output.Error(entry.KeyPosition, "Can not have a single user/pass and a users array");
        }
        else if (hasUsers && hasToken)
        {
            output.Error(entry.KeyPosition, "Can not have a token and a users array");
        }
        else if (known.Add(blockUsers ?? []) is [var duplicate, ..])
        {
            // nats-server stops at the block's first duplicate.
            output.Error(entry.KeyPosition, duplicate);
        }

        known.SingleUser = hasUser;
        known.Token = hasToken;
    }

    // Float seconds, an integer number of seconds, or a Go duration string.
    /// <summary>An authorization block's <c>timeout</c> (seconds, or a duration) onto <paramref name="key"/>.</summary>
    public void Timeout(ConfEntry item, string key)
    {
        TimeSpan timeout;
        switch (item.Value)
        {
            case ConfInteger seconds:
                timeout = TimeSpan.FromSeconds(seconds.Value);
                break;
            case ConfFloat seconds:
                timeout = TimeSpan.FromSeconds(seconds.Value);
                break;
            case ConfString text:
                if (!ConfigSyntax.TryParseDuration(text.Value, out timeout, out var error))
                {
                    output.Error(item.KeyPosition, $"error parsing authorization config, 'timeout' {error}");
                    return;
                }

                break;
            default:
                output.Error(item.KeyPosition, "error parsing authorization config, 'timeout' wrong type");
                return;
        }

        output.Set(key, Format(timeout));
    }
}
