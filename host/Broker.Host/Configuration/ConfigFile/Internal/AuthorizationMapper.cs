using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfKeys;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// The <c>authorization</c> block and <c>no_auth_user</c> (nats-server opts.go parseAuthorization, parseUsers) onto
/// <see cref="AuthorizationOptions"/> keys, with nats-server's checks of the combinations: a user/password or a
/// token or a users array, users without duplicates, NKey users without names or passwords.
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
/// <param name="permissions">Reads the default permissions and each user's.</param>
internal sealed class AuthorizationMapper(ConfValueReader reader, ConfMappingBuilder output, PermissionsMapper permissions)
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
        List<(string Name, bool Nkey)>? users = null;
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
                    Timeout(item);
                    break;
                case "users":
                    users = Users(item);
                    break;
                case "default_permission" or "default_permissions" or "permissions":
                    permissions.Map(item, Authorization(nameof(AuthorizationOptions.DefaultPermissions)));
                    break;
                case "auth_callout" or "auth_hook":
                    reader.Forbidden(item, "authorization callouts");
                    break;
                case "proxy_required":
                    reader.Forbidden(item, "trusted proxies");
                    break;
                default:
                    reader.Unknown(item);
                    break;
            }
        }

        // nats-server's checks, reported at the block.
        if (hasUser && hasToken)
        {
            output.Error(entry.KeyPosition, "Cannot have a user/pass and token");
        }
        else if (users is not null && hasUser)
        {
            output.Error(entry.KeyPosition, "Can not have a single user/pass and a users array");
        }
        else if (users is not null && hasToken)
        {
            output.Error(entry.KeyPosition, "Can not have a token and a users array");
        }

        var seen = new HashSet<string>(StringComparer.Ordinal);
        foreach (var (name, nkey) in users ?? [])
        {
            if (!seen.Add(name))
            {
                output.Error(entry.KeyPosition, nkey ? $"Duplicate nkey \"{name}\" detected" : $"Duplicate user \"{name}\" detected");
                break;
            }
        }
    }

    // Float seconds, an integer number of seconds, or a Go duration string.
    private void Timeout(ConfEntry item)
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

        output.Set(Authorization(nameof(AuthorizationOptions.Timeout)), Format(timeout));
    }

    // The users array; returns the user names and NKeys read (null when the value is not an array).
    private List<(string Name, bool Nkey)>? Users(ConfEntry entry)
    {
        if (entry.Value is not ConfArray array)
        {
            output.Error(entry.KeyPosition, $"Expected users field to be an array, got {entry.Value}");
            return null;
        }

        var names = new List<(string Name, bool Nkey)>();
        foreach (var item in array.Items)
        {
            var index = names.Count;
            if (item is not ConfMap user)
            {
                output.Error(item.Position, $"Expected user entry to be a map/struct, got {item}");
                continue;
            }

            var prefix = Authorization(nameof(AuthorizationOptions.Users), Format(index));
            string? name = null;
            string? nkey = null;
            var hasPassword = false;
            foreach (var field in user.Entries)
            {
                switch (field.Key.ToLowerInvariant())
                {
                    case "user" or "username":
                        if (reader.TryString(field, out var text))
                        {
                            name = text;
                            output.Set(prefix + ":" + nameof(UserOptions.User), text);
                        }

                        break;
                    case "pass" or "password":
                        reader.SetString(field, prefix + ":" + nameof(UserOptions.Password));
                        hasPassword = true;
                        break;
                    case "permission" or "permissions" or "authorization":
                        permissions.Map(field, prefix + ":" + nameof(UserOptions.Permissions));
                        break;
                    case "nkey":
                        if (reader.TryString(field, out var key))
                        {
                            nkey = key;
                            output.Set(prefix + ":" + nameof(UserOptions.Nkey), key);
                        }

                        break;
                    case "allowed_connection_types" or "connection_types" or "clients":
                        reader.Forbidden(field, "allowed connection types");
                        break;
                    case "proxy_required":
                        reader.Forbidden(field, "trusted proxies");
                        break;
                    default:
                        reader.Unknown(field);
                        break;
                }
            }

            // nats-server parseUsers: an NKey user has neither name nor password (the key itself is checked when the
            // options are validated).
            if (!string.IsNullOrEmpty(nkey))
            {
                if (name is not null || hasPassword)
                {
                    output.Error(item.Position, "Nkey users do not take usernames or passwords");
                    output.RemoveSection(prefix);
                    continue;
                }

                names.Add((nkey, true));
                continue;
            }

            if (string.IsNullOrEmpty(name))
            {
                output.Error(item.Position, "User entry requires a user");
                output.RemoveSection(prefix);
                continue;
            }

            names.Add((name, false));
        }

        return names;
    }
}
