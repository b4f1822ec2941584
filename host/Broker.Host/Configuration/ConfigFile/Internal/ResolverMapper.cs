using System.Text.RegularExpressions;
using Broker.Abstractions;
using Broker.Core;
using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// The <c>resolver</c> (<c>account_resolver</c>, <c>accounts_resolver</c>) entry of operator mode (nats-server opts.go
/// <c>case "resolver"</c>) onto <see cref="OperatorOptions"/> keys: <c>MEM</c>/<c>MEMORY</c> →
/// <c>Operator:Resolver = Memory</c>; a map <c>{ type: full|cache, dir, allow_delete, limit, ttl, interval, timeout }</c>
/// → <c>Operator:Resolver = Full|Cache</c> and <c>Operator:DirectoryResolver:*</c>, checked with nats-server's texts at
/// the key; <c>URL(...)</c> is refused (the broker has no HTTP client). The map's keys are matched in their exact
/// case, as Go's map lookups are.
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
internal sealed partial class ResolverMapper(ConfValueReader reader, ConfMappingBuilder output)
{
    private const string Unparsed = "error parsing account resolver, should be MEM or  URL(\"url\") or a map containing dir and type state=[FULL|CACHE])";

    /// <summary>Whether <paramref name="key"/> (any letter case) names the resolver.</summary>
    public static bool Reads(string key) =>
        key.Equals("resolver", StringComparison.OrdinalIgnoreCase)
        || key.Equals("account_resolver", StringComparison.OrdinalIgnoreCase)
        || key.Equals("accounts_resolver", StringComparison.OrdinalIgnoreCase);

    /// <summary>Maps the resolver entry.</summary>
    public void Map(ConfEntry entry)
    {
        var prefix = ConfKeys.Key(nameof(BrokerOptions.Operator));
        switch (entry.Value)
        {
            case ConfString text when MemoryPattern().IsMatch(text.Value):
                output.Set(prefix + ":" + nameof(OperatorOptions.Resolver), nameof(AccountResolverType.Memory));
                break;
            case ConfString text when UrlPattern().IsMatch(text.Value):
                reader.Forbidden(entry, "URL account resolvers: the broker has no HTTP client for account JWTs; use MEMORY or a full or cache resolver");
                break;
            case ConfString:
                output.Error(entry.KeyPosition, Unparsed);
                break;
            case ConfMap map:
                MapDirectory(entry, map, prefix);
                break;
            default:
                output.Error(entry.KeyPosition, $"error parsing operator resolver, wrong type {GoType(entry.Value)}");
                break;
        }
    }

    private void MapDirectory(ConfEntry entry, ConfMap map, string prefix)
    {
        var options = new DirectoryResolverOptions();
        string? type = null;
        if (map.TryGetExactEntry("dir", out var dir) && reader.TryString(dir, out var dirText))
        {
            options.Directory = dirText;
        }

        if (map.TryGetExactEntry("type", out var typeEntry) && reader.TryString(typeEntry, out var typeText))
        {
            type = typeText.ToUpperInvariant();
        }

        if (map.TryGetExactEntry("allow_delete", out var delete) && reader.TryBool(delete, out var allowDelete))
        {
            options.AllowDelete = allowDelete;
        }

        if (map.TryGetExactEntry("limit", out var limit) && reader.TryInteger(limit, out var limitValue))
        {
            options.Limit = limitValue;
        }

        // nats-server parses ttl, then interval and timeout while no error came, and reports the first at the key.
        string? error = null;
        options.Ttl = Duration(map, "ttl", ref error);
        options.SyncInterval = Duration(map, "interval", ref error);
        if (map.TryGetExactEntry("timeout", out _))
        {
            options.FetchTimeout = Duration(map, "timeout", ref error);
        }

        if (error is not null)
        {
            output.Error(entry.KeyPosition, error);
            return;
        }

        if (string.IsNullOrEmpty(options.Directory))
        {
            output.Error(entry.KeyPosition, "dir has no value and needs to point to a directory");
            return;
        }

        var resolver = type switch
        {
            "FULL" => AccountResolverType.Full,
            "CACHE" => AccountResolverType.Cache,
            _ => AccountResolverType.None,
        };
        if (resolver == AccountResolverType.None)
        {
            output.Error(entry.KeyPosition, Unparsed);
            return;
        }

        try
        {
            options.Validate(resolver);
        }
        catch (InvalidOperationException ex)
        {
            output.Error(entry.KeyPosition, ex.Message);
            return;
        }

        output.Set(prefix + ":" + nameof(OperatorOptions.Resolver), resolver.ToString());
        var section = prefix + ":" + nameof(OperatorOptions.DirectoryResolver) + ":";
        output.Set(section + nameof(DirectoryResolverOptions.Directory), options.Directory);
        output.Set(section + nameof(DirectoryResolverOptions.AllowDelete), Format(options.AllowDelete));
        output.Set(section + nameof(DirectoryResolverOptions.Limit), Format(options.Limit));
        output.Set(section + nameof(DirectoryResolverOptions.Ttl), Format(options.Ttl));
        output.Set(section + nameof(DirectoryResolverOptions.SyncInterval), Format(options.SyncInterval));
        output.Set(section + nameof(DirectoryResolverOptions.FetchTimeout), Format(options.FetchTimeout));
    }

    // Go's time.ParseDuration of a string value; the first error wins.
    private TimeSpan Duration(ConfMap map, string key, ref string? error)
    {
        if (error is not null || !map.TryGetExactEntry(key, out var entry))
        {
            return TimeSpan.Zero;
        }

        if (!reader.TryString(entry, out var text))
        {
            return TimeSpan.Zero;
        }

        if (!ConfigSyntax.TryParseDuration(text, out var value, out var parseError))
        {
            error = parseError;
            return TimeSpan.Zero;
        }

        return value;
    }

    [GeneratedRegex(@"(?i)(MEM|MEMORY)\s*")]
    private static partial Regex MemoryPattern();

    [GeneratedRegex(@"(?i)(?:URL){1}(?:\({1}\s*""?([^\s""]*)""?\s*\){1})?\s*")]
    private static partial Regex UrlPattern();
}
