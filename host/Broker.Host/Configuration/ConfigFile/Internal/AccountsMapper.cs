using Broker.Core;
using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfKeys;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// The <c>accounts</c> block (nats-server opts.go parseAccounts, parseAccountLimits) onto <see cref="AccountOptions"/>
/// keys (<c>Broker:Accounts:0:Name</c>, <c>...:Users:0:User</c>, <c>...:Limits:MaxConnections</c>): the map form
/// <c>accounts { A: { nkey, users, default_permissions, limits, jetstream } }</c> (<see cref="AccountJetStreamMapper"/>) and
/// the array of names <c>accounts: [A, B]</c>,
/// with nats-server's texts for a reserved or repeated name, an account that is not a map, a bad account NKey and bad
/// limits. Users are read as the <c>authorization</c> block's are (<see cref="UsersMapper"/>) and checked against the
/// whole file's (<see cref="ConfiguredUsers"/>).
/// </summary>
/// <remarks>
/// <c>exports</c> and <c>imports</c> (streams and services) are read by <see cref="ImportsMapper"/>, an account's <c>jetstream</c> by
/// <see cref="AccountJetStreamMapper"/>, its <c>mappings</c> by <see cref="MappingsMapper"/>.
/// </remarks>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
/// <param name="users">Reads each account's users.</param>
/// <param name="permissions">Reads each account's default permissions.</param>
/// <param name="known">The users of the whole file so far.</param>
/// <param name="mappings">Reads each account's subject mappings.</param>
internal sealed class AccountsMapper(ConfValueReader reader, ConfMappingBuilder output, UsersMapper users, PermissionsMapper permissions, ConfiguredUsers known, MappingsMapper mappings)
{
    private readonly ImportsMapper importsMapper = new(reader, output);

    // Each account's name, exports and imports as read, for the checks across accounts.
    private readonly List<AccountOptions> read = [];

    // nats-server's only reserved name here (isReservedAccount): the global account.
    private const string GlobalAccount = "$G";

    // Accounts mapped so far: a second `accounts` key (another letter case) continues the list, as nats-server appends.
    private int count;

    /// <summary>Whether <paramref name="key"/> (any letter case) is <c>accounts</c>.</summary>
    public static bool Reads(string key) => string.Equals(key, "accounts", StringComparison.OrdinalIgnoreCase);

    /// <summary>Maps a top-level entry if it is <c>accounts</c>.</summary>
    /// <returns>Whether it was.</returns>
    public bool TryMap(ConfEntry entry)
    {
        if (!Reads(entry.Key))
        {
            return false;
        }

        // nats-server ignores any other kind of value without a word.
        if (entry.Value is ConfArray names)
        {
            Names(names);
        }
        else if (entry.Value is ConfMap accounts)
        {
            Accounts(accounts);
            importsMapper.Check(entry.KeyPosition, read);
        }

        return true;
    }

    private static string Prefix(int index) => Key(nameof(BrokerOptions.Accounts), Format(index));

    // accounts: [A, B]: accounts without users or limits.
    private void Names(ConfArray names)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        foreach (var item in names.Items)
        {
            if (item is not ConfString { Value: var name })
            {
                // A Go type assertion that panics: nats-server stops reading the accounts there.
                reader.TypeError(item.Position, item, "string");
                return;
            }

            if (name == GlobalAccount)
            {
                output.Error(item.Position, $"\"{name}\" is a Reserved Account");
            }
            else if (!seen.Add(name))
            {
                output.Error(item.Position, $"Duplicate Account Entry: {name}");
            }
            else
            {
                output.Set(Prefix(count++) + ":" + nameof(AccountOptions.Name), name);
            }
        }
    }

    private void Accounts(ConfMap accounts)
    {
        foreach (var entry in accounts.Entries)
        {
            // An entry that only serves as a $variable is no account.
            if (entry.UsedAsVariable)
            {
                continue;
            }

            if (entry.Value is not ConfMap body)
            {
                output.Error(entry.KeyPosition, "Expected map entries for accounts");
            }
            else if (entry.Key == GlobalAccount)
            {
                output.Error(entry.KeyPosition, $"\"{entry.Key}\" is a Reserved Account");
            }
            else
            {
                Account(entry.Key, body, Prefix(count++));
            }
        }
    }

    private void Account(string name, ConfMap body, string prefix)
    {
        output.Set(prefix + ":" + nameof(AccountOptions.Name), name);
        var account = new AccountOptions { Name = name };
        read.Add(account);
        ConfEntry? usersEntry = null;
        List<ConfiguredUser>? accountUsers = null;
        var mapped = 0;
        foreach (var field in body.Entries)
        {
            switch (field.Key.ToLowerInvariant())
            {
                case "nkey":
                    Nkey(field, prefix + ":" + nameof(AccountOptions.Nkey));
                    break;
                case "users":
                    usersEntry = field;
                    accountUsers = users.Map(field, prefix + ":" + nameof(AccountOptions.Users));
                    break;
                case "default_permissions":
                    permissions.Map(field, prefix + ":" + nameof(AccountOptions.DefaultPermissions));
                    break;
                case "limits":
                    Limits(field, prefix + ":" + nameof(AccountOptions.Limits));
                    break;
                case "exports":
                    importsMapper.Exports(field, prefix + ":" + nameof(AccountOptions.Exports), account);
                    break;
                case "imports":
                    importsMapper.Imports(field, prefix + ":" + nameof(AccountOptions.Imports), account);
                    break;
                case "jetstream":
                    AccountJetStreamMapper.Map(field, prefix + ":" + nameof(AccountOptions.JetStream), output);
                    break;
                case "mappings" or "maps":
                    // A second block adds to the account's mappings, as nats-server adds each to the account.
                    mapped += mappings.Map(field, prefix + ":" + nameof(AccountOptions.Mappings), mapped, write: true);
                    break;
                default:
                    reader.Unknown(field);
                    break;
            }
        }

        if (usersEntry is null || accountUsers is not { Count: > 0 })
        {
            return;
        }

        // nats-server's checks against the authorization block read before, and users across the file.
        if (known.SingleUser)
        {
            output.Error(usersEntry.KeyPosition, "Can not have a single user/pass and accounts");
        }
        else if (known.Token)
        {
            output.Error(usersEntry.KeyPosition, "Can not have a token and accounts");
        }
        else
        {
            foreach (var duplicate in known.Add(accountUsers))
            {
                output.Error(usersEntry.KeyPosition, duplicate);
            }
        }
    }

    private void Nkey(ConfEntry field, string key)
    {
        if (field.Value is ConfString text && PublicKeys.IsAccountKey(text.Value))
        {
            output.Set(key, text.Value);
            return;
        }

        output.Error(field.KeyPosition, $"Not a valid public nkey for an account: {GoQuoted(field.Value)}");
    }

    // limits { max_connections, max_subscriptions, max_payload, max_leafnodes } with their short aliases.
    private void Limits(ConfEntry entry, string prefix)
    {
        if (entry.Value is not ConfMap block)
        {
            output.Error(entry.KeyPosition, $"Expected account limits to be a map/struct, got {entry.Value}");
            return;
        }

        foreach (var item in block.Entries)
        {
            var property = item.Key.ToLowerInvariant() switch
            {
                "max_connections" or "max_conn" => nameof(AccountLimitOptions.MaxConnections),
                "max_subscriptions" or "max_subs" => nameof(AccountLimitOptions.MaxSubscriptions),
                "max_payload" or "max_pay" => nameof(AccountLimitOptions.MaxPayload),
                "max_leafnodes" or "max_leafs" => nameof(AccountLimitOptions.MaxLeafNodes),
                _ => null,
            };
            if (property is null)
            {
                if (!item.UsedAsVariable)
                {
                    output.Error(item.KeyPosition, $"Unknown field \"{item.Key}\" parsing account limits");
                }

                continue;
            }

            // nats-server keeps each limit as an int32 and converts without a check: 3GB wraps, as there.
            if (reader.TryInteger(item, out var value))
            {
                output.Set(prefix + ":" + property, Format(unchecked((int)value)));
            }
        }
    }
}
