using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// A <c>users</c> array (nats-server opts.go parseUsers) onto <see cref="UserOptions"/> keys, for the
/// <c>authorization</c> block and for each account alike: names with passwords, or NKey users, each with permissions.
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
/// <param name="permissions">Reads each user's permissions.</param>
internal sealed class UsersMapper(ConfValueReader reader, ConfMappingBuilder output, PermissionsMapper permissions)
{
    /// <summary>
    /// Maps the users array of <paramref name="entry"/> onto <c>prefix:0:...</c>, <c>prefix:1:...</c>; a refused
    /// user leaves no keys and the next one takes its index.
    /// </summary>
    /// <param name="entry">The <c>users</c> entry.</param>
    /// <param name="prefix">The configuration key of the users list.</param>
    /// <returns>The names and NKeys read, in order; <see langword="null"/> when the value is not an array.</returns>
    public List<ConfiguredUser>? Map(ConfEntry entry, string prefix)
    {
        if (entry.Value is not ConfArray array)
        {
            output.Error(entry.KeyPosition, $"Expected users field to be an array, got {entry.Value}");
            return null;
        }

        var users = new List<ConfiguredUser>();
        foreach (var item in array.Items)
        {
            if (item is not ConfMap user)
            {
                output.Error(item.Position, $"Expected user entry to be a map/struct, got {item}");
                continue;
            }

            if (User(item, user, prefix + ":" + Format(users.Count)) is { } read)
            {
                users.Add(read);
            }
        }

        return users;
    }

    // One user's fields under prefix; null (and no keys) when nats-server refuses the entry.
    private ConfiguredUser? User(ConfValue item, ConfMap user, string prefix)
    {
        string? name = null;
        ConfEntry? nkey = null;
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
                    if (reader.TryString(field, out var publicKey))
                    {
                        nkey = field;
                        output.Set(prefix + ":" + nameof(UserOptions.Nkey), publicKey);
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

        // nats-server parseUsers: an NKey user has a valid public user key and neither name nor password.
        if (nkey is { Value: ConfString { Value.Length: > 0 } key })
        {
            if (!PublicKeys.IsUserKey(key.Value))
            {
                output.Error(nkey.KeyPosition, "Not a valid public nkey for a user");
            }
            else if (name is not null || hasPassword)
            {
                output.Error(item.Position, "Nkey users do not take usernames or passwords");
            }
            else
            {
                return new ConfiguredUser(key.Value, Nkey: true);
            }

            output.RemoveSection(prefix);
            return null;
        }

        if (string.IsNullOrEmpty(name))
        {
            output.Error(item.Position, "User entry requires a user");
            output.RemoveSection(prefix);
            return null;
        }

        return new ConfiguredUser(name, Nkey: false);
    }
}

/// <summary>A user read from a <c>users</c> array: its name, or its public key for an NKey user.</summary>
/// <param name="Name">The user name or the public NKey.</param>
/// <param name="Nkey">Whether <paramref name="Name"/> is a public NKey.</param>
internal readonly record struct ConfiguredUser(string Name, bool Nkey);
