using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile;

// The authorization block (nats-server opts.go parseAuthorization, parseUsers, parseUserPermissions).
internal sealed partial class ConfMapper
{
    private void Authorization(ConfEntry entry)
    {
        if (!TryMap(entry, out var block))
        {
            return;
        }

        var hasUser = false;
        var hasToken = false;
        List<string>? users = null;
        foreach (var item in block.Entries)
        {
            switch (item.Key.ToLowerInvariant())
            {
                case "user" or "username":
                    SetString(item, AuthorizationKey(nameof(AuthorizationOptions.User)));
                    hasUser = true;
                    break;
                case "pass" or "password":
                    SetString(item, AuthorizationKey(nameof(AuthorizationOptions.Password)));
                    hasUser = true;
                    break;
                case "token":
                    SetString(item, AuthorizationKey(nameof(AuthorizationOptions.Token)));
                    hasToken = true;
                    break;
                case "timeout":
                    AuthorizationTimeout(item);
                    break;
                case "users":
                    users = Users(item);
                    break;
                case "default_permission" or "default_permissions" or "permissions":
                    Permissions(item, AuthorizationKey(nameof(AuthorizationOptions.DefaultPermissions)));
                    break;
                case "auth_callout" or "auth_hook":
                    Forbidden(item, "authorization callouts");
                    break;
                case "proxy_required":
                    Forbidden(item, "trusted proxies");
                    break;
                default:
                    Unknown(item);
                    break;
            }
        }

        // nats-server's checks, reported at the block.
        if (hasUser && hasToken)
        {
            Error(entry.KeyPosition, "Cannot have a user/pass and token");
        }
        else if (users is not null && hasUser)
        {
            Error(entry.KeyPosition, "Can not have a single user/pass and a users array");
        }
        else if (users is not null && hasToken)
        {
            Error(entry.KeyPosition, "Can not have a token and a users array");
        }

        var seen = new HashSet<string>(StringComparer.Ordinal);
        foreach (var name in users ?? [])
        {
            if (!seen.Add(name))
            {
                Error(entry.KeyPosition, $"Duplicate user \"{name}\" detected");
                break;
            }
        }
    }

    // Float seconds, an integer number of seconds, or a Go duration string.
    private void AuthorizationTimeout(ConfEntry item)
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
                    Error(item.KeyPosition, $"error parsing authorization config, 'timeout' {error}");
                    return;
                }

                break;
            default:
                Error(item.KeyPosition, "error parsing authorization config, 'timeout' wrong type");
                return;
        }

        Set(AuthorizationKey(nameof(AuthorizationOptions.Timeout)), Format(timeout));
    }

    // The users array; returns the names read (null when the value is not an array).
    private List<string>? Users(ConfEntry entry)
    {
        if (entry.Value is not ConfArray array)
        {
            Error(entry.KeyPosition, $"Expected users field to be an array, got {entry.Value}");
            return null;
        }

        var names = new List<string>();
        foreach (var item in array.Items)
        {
            var index = names.Count;
            if (item is not ConfMap user)
            {
                Error(item.Position, $"Expected user entry to be a map/struct, got {item}");
                continue;
            }

            var prefix = AuthorizationKey(nameof(AuthorizationOptions.Users), Format(index));
            string? name = null;
            var refused = false;
            foreach (var field in user.Entries)
            {
                switch (field.Key.ToLowerInvariant())
                {
                    case "user" or "username":
                        if (TryString(field, out var text))
                        {
                            name = text;
                            Set(prefix + ":" + nameof(UserOptions.User), text);
                        }

                        break;
                    case "pass" or "password":
                        SetString(field, prefix + ":" + nameof(UserOptions.Password));
                        break;
                    case "permission" or "permissions" or "authorization":
                        Permissions(field, prefix + ":" + nameof(UserOptions.Permissions));
                        break;
                    case "nkey":
                        Forbidden(field, "nkey users");
                        refused = true;
                        break;
                    case "allowed_connection_types" or "connection_types" or "clients":
                        Forbidden(field, "allowed connection types");
                        break;
                    case "proxy_required":
                        Forbidden(field, "trusted proxies");
                        break;
                    default:
                        Unknown(field);
                        break;
                }
            }

            if (string.IsNullOrEmpty(name))
            {
                if (!refused)
                {
                    Error(item.Position, "User entry requires a user");
                }

                RemoveKeys(prefix);
                continue;
            }

            names.Add(name);
        }

        return names;
    }

    private void RemoveKeys(string prefix)
    {
        foreach (var key in settings.Keys.Where(k => k.StartsWith(prefix + ":", StringComparison.OrdinalIgnoreCase)).ToList())
        {
            settings.Remove(key);
        }
    }
}
