using Broker.Core;
using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// Operator mode's top-level keys (nats-server <c>opts.go</c>): <c>operator</c> and its aliases (a JWT file's path or
/// the JWT inline), <c>trusted</c>/<c>trusted_keys</c>, <c>resolver</c> (<c>MEMORY</c> only: <c>URL(...)</c> and the
/// nats-based <c>{ type: full|cache }</c> resolvers are refused, naming what is missing) and <c>resolver_preload</c>,
/// each with nats-server's error texts at its positions. The checks across keys (<c>validateTrustedOperators</c>) are
/// <see cref="OperatorOptions.Validate"/>'s, when the options are built.
/// </summary>
/// <param name="reader">Typed reads and refusals.</param>
/// <param name="output">Where values and errors go.</param>
internal sealed class OperatorMapper(ConfValueReader reader, ConfMappingBuilder output)
{
    private static readonly HashSet<string> OperatorKeys = new(StringComparer.OrdinalIgnoreCase)
    {
        "operator", "operators", "root", "roots", "root_operator", "root_operators",
    };

    private static readonly HashSet<string> ResolverKeys = new(StringComparer.OrdinalIgnoreCase)
    {
        "resolver", "account_resolver", "accounts_resolver",
    };

    /// <summary>Whether <paramref name="key"/> (any letter case) is one of the keys mapped here.</summary>
    public static bool Reads(string key) =>
        OperatorKeys.Contains(key) || ResolverKeys.Contains(key)
        || key.Equals("resolver_preload", StringComparison.OrdinalIgnoreCase)
        || key.Equals("trusted", StringComparison.OrdinalIgnoreCase) || key.Equals("trusted_keys", StringComparison.OrdinalIgnoreCase);

    /// <summary>Maps a top-level entry if it is one of operator mode's keys.</summary>
    /// <returns>Whether it was.</returns>
    public bool TryMap(ConfEntry entry)
    {
        if (OperatorKeys.Contains(entry.Key))
        {
            MapOperator(entry);
        }
        else if (ResolverKeys.Contains(entry.Key))
        {
            MapResolver(entry);
        }
        else if (entry.Key.Equals("resolver_preload", StringComparison.OrdinalIgnoreCase))
        {
            MapPreload(entry);
        }
        else if (entry.Key.Equals("trusted", StringComparison.OrdinalIgnoreCase) || entry.Key.Equals("trusted_keys", StringComparison.OrdinalIgnoreCase))
        {
            MapTrusted(entry);
        }
        else
        {
            return false;
        }

        return true;
    }

    private static string Key(params string[] path) => ConfKeys.Key([nameof(BrokerOptions.Operator), .. path]);

    // nats-server reads the value as a file name, falling back to the JWT inline when the file does not exist and the
    // value starts like a JWT; only a string is accepted (an array fails its type switch).
    private void MapOperator(ConfEntry entry)
    {
        if (entry.Value is not ConfString text)
        {
            output.Error(entry.KeyPosition, $"error parsing operators: unsupported type {GoType(entry.Value)}");
            return;
        }

        string contents;
        try
        {
            contents = File.ReadAllText(text.Value);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            if (!text.Value.StartsWith("eyJ", StringComparison.Ordinal))
            {
                output.Error(entry.KeyPosition, $"error parsing operator JWT: open {text.Value}: no such file or directory");
                return;
            }

            contents = text.Value;
        }

        var jwt = OperatorOptions.ReadDecoratedJwt(contents);
        if (!OperatorOptions.IsOperatorJwt(jwt, out var error))
        {
            output.Error(entry.KeyPosition, $"error parsing operator JWT: {error}");
            return;
        }

        output.Set(Key(nameof(OperatorOptions.Operators), "0"), jwt);
    }

    // The resolver's values (MEM, URL(...), a directory map) are read in one place: ResolverMapper.
    private void MapResolver(ConfEntry entry) => new ResolverMapper(reader, output).Map(entry);

    private void MapPreload(ConfEntry entry)
    {
        if (entry.Value is not ConfMap map)
        {
            output.Error(entry.KeyPosition, "preload should be a map of account_public_key:account_jwt");
            return;
        }

        foreach (var item in map.Entries)
        {
            if (item.Value is not ConfString jwt)
            {
                output.Error(item.KeyPosition, "preload map value should be a string JWT");
                continue;
            }

            if (!OperatorOptions.IsAccountJwt(jwt.Value))
            {
                output.Error(item.KeyPosition, "invalid account JWT");
                continue;
            }

            output.Set(Key(nameof(OperatorOptions.ResolverPreload), item.Key), jwt.Value);
        }
    }

    private void MapTrusted(ConfEntry entry)
    {
        List<string> keys = [];
        switch (entry.Value)
        {
            case ConfString text:
                keys.Add(text.Value);
                break;
            case ConfArray array:
                foreach (var item in array.Items)
                {
                    if (item is ConfString key)
                    {
                        keys.Add(key.Value);
                    }
                    else
                    {
                        output.Error(item.Position, $"error parsing trusted: unsupported type in array {GoType(item)}");
                    }
                }

                break;
            default:
                output.Error(entry.KeyPosition, $"error parsing trusted: unsupported type {GoType(entry.Value)}");
                return;
        }

        for (var i = 0; i < keys.Count; i++)
        {
            if (!OperatorOptions.IsOperatorKey(keys[i]))
            {
                output.Error(entry.KeyPosition, $"trust key \"{keys[i]}\" required to be a valid public operator nkey");
            }

            output.Set(Key(nameof(OperatorOptions.TrustedKeys), i.ToString(System.Globalization.CultureInfo.InvariantCulture)), keys[i]);
        }
    }
}
