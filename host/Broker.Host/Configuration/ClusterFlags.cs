using System.Globalization;

namespace Broker.Host.Configuration;

/// <summary>
/// nats-server's cluster flags turned into <c>Broker:Cluster:*</c> settings, as its <c>overrideCluster</c> and
/// <c>mergeRoutes</c> do: <c>--cluster nats://[user:pass@]host:port</c> (port <c>-1</c>: a free one; an empty URL turns
/// routes off) replaces the listen address and the route credentials, <c>--routes a,b</c> replaces the file's routes,
/// <c>--cluster_name</c>, <c>--cluster_advertise</c>, <c>--no_advertise</c> and <c>--connect_retries</c> set theirs.
/// </summary>
internal static class ClusterFlags
{
    /// <summary>The prefix of the keys the cluster flags are parsed to (<c>Command:Cluster:routes</c>...).</summary>
    public const string Prefix = "Command:Cluster:";

    private const string Section = HostConfiguration.BrokerSection + ":Cluster:";

    private const string RoutesSection = Section + "Routes:";

    /// <summary>Replaces the parsed cluster flags in <paramref name="settings"/> by the cluster's settings.</summary>
    /// <returns><see langword="null"/>, or nats-server's error for a flag it refuses.</returns>
    public static string? Apply(Dictionary<string, string?> settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        // A loop rather than LINQ's Where: its instantiation over KeyValuePair is in no ReadyToRun image, and every start
        // (with cluster flags or not) paid the JIT for it.
        var given = new List<KeyValuePair<string, string?>>();
        foreach (var setting in settings)
        {
            if (setting.Key.StartsWith(Prefix, StringComparison.OrdinalIgnoreCase))
            {
                given.Add(setting);
            }
        }

        foreach (var (key, value) in given)
        {
            settings.Remove(key);
            var error = key[Prefix.Length..] switch
            {
                "cluster" => Listen(settings, value ?? string.Empty),
                "routes" => Routes(settings, value ?? string.Empty),
                "cluster_name" => Set(settings, "Name", value),
                "no_advertise" => Set(settings, "NoAdvertise", value),
                "connect_retries" => Set(settings, "ConnectRetries", value),
                "cluster_advertise" => Set(settings, "Advertise", value),
                _ => null,
            };
            if (error is not null)
            {
                return error;
            }
        }

        return null;
    }

    /// <summary>Whether a file or environment setting is replaced by the flags (<c>--routes</c> replaces the whole list).</summary>
    public static bool Replaces(IReadOnlyDictionary<string, string?> flags, string key)
        => key.StartsWith(RoutesSection, StringComparison.OrdinalIgnoreCase) && flags.Keys.Any(k => k.StartsWith(RoutesSection, StringComparison.OrdinalIgnoreCase));

    private static string? Set(Dictionary<string, string?> settings, string name, string? value)
    {
        settings[Section + name] = value;
        return null;
    }

    // overrideCluster: "" turns routes off; otherwise a URL whose host and port (":-1" a free one) are the listen
    // address and whose user and password, if any, the route credentials (none given clears the file's).
    private static string? Listen(Dictionary<string, string?> settings, string value)
    {
        if (value.Length == 0)
        {
            settings[Section + "Port"] = "0";
            return null;
        }

        var random = value.EndsWith(":-1", StringComparison.Ordinal);
        var text = random ? value[..^3] + ":0" : value;
        if (!Uri.TryCreate(text, UriKind.Absolute, out var url) || url.Host.Length == 0)
        {
            return $"parse \"{value}\": invalid URI for request";
        }

        if (url.IsDefaultPort && !text.Contains(':' + url.Port.ToString(CultureInfo.InvariantCulture), StringComparison.Ordinal))
        {
            return "missing port in address";
        }

        settings[Section + "Host"] = url.Host.Trim('[', ']');
        settings[Section + "Port"] = random ? "-1" : url.Port.ToString(CultureInfo.InvariantCulture);
        var userInfo = url.UserInfo;
        if (userInfo.Length == 0)
        {
            settings[Section + "Username"] = string.Empty;
            settings[Section + "Password"] = string.Empty;
            return null;
        }

        var colon = userInfo.IndexOf(':', StringComparison.Ordinal);
        if (colon < 0)
        {
            return "expected cluster password to be set";
        }

        settings[Section + "Username"] = Uri.UnescapeDataString(userInfo[..colon]);
        settings[Section + "Password"] = Uri.UnescapeDataString(userInfo[(colon + 1)..]);
        return null;
    }

    // RoutesFromStr: comma separated, trimmed; the list replaces the file's.
    private static string? Routes(Dictionary<string, string?> settings, string value)
    {
        if (value.Length == 0)
        {
            return null;
        }

        var index = 0;
        foreach (var route in value.Split(','))
        {
            settings[RoutesSection + index++.ToString(CultureInfo.InvariantCulture)] = route.Trim();
        }

        return null;
    }
}
