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
        List<(string Name, bool Nkey)>? users = null;
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
        foreach (var (name, nkey) in users ?? [])
        {
            if (!seen.Add(name))
            {
                Error(entry.KeyPosition, nkey ? $"Duplicate nkey \"{name}\" detected" : $"Duplicate user \"{name}\" detected");
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

    // The users array; returns the user names and NKeys read (null when the value is not an array).
    private List<(string Name, bool Nkey)>? Users(ConfEntry entry)
    {
        if (entry.Value is not ConfArray array)
        {
            Error(entry.KeyPosition, $"Expected users field to be an array, got {entry.Value}");
            return null;
        }

        var names = new List<(string Name, bool Nkey)>();
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
            string? nkey = null;
            var hasPassword = false;
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
                        hasPassword = true;
                        break;
                    case "permission" or "permissions" or "authorization":
                        Permissions(field, prefix + ":" + nameof(UserOptions.Permissions));
                        break;
                    case "nkey":
                        if (TryString(field, out var key))
                        {
                            nkey = key;
                            Set(prefix + ":" + nameof(UserOptions.Nkey), key);
                        }

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

            // nats-server parseUsers: an NKey user has neither name nor password (the key itself is checked when the
            // options are validated).
            if (!string.IsNullOrEmpty(nkey))
            {
                if (name is not null || hasPassword)
                {
                    Error(item.Position, "Nkey users do not take usernames or passwords");
                    RemoveKeys(prefix);
                    continue;
                }

                names.Add((nkey, true));
                continue;
            }

            if (string.IsNullOrEmpty(name))
            {
                Error(item.Position, "User entry requires a user");
                RemoveKeys(prefix);
                continue;
            }

            names.Add((name, false));
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
