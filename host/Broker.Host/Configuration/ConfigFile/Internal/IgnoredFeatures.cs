using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// Top-level keys of nats-server features this broker does not have yet (clustering, gateways, leaf nodes, ...):
/// accepted, and reported with one notice per feature naming every key that asked for it, at the first of them.
/// </summary>
/// <remarks>Ignoring them changes no security property: a client simply cannot use the feature.</remarks>
internal sealed class IgnoredFeatures
{
    /// <summary>The keys, with the feature named in the notice; docs/configuration.md lists exactly these.</summary>
    public static readonly IReadOnlyDictionary<string, string> FeatureOfKey = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase)
    {
        ["mqtt"] = "MQTT",
        ["gateway"] = "Gateways",
        ["server_tags"] = "Server tags",
        ["server_metadata"] = "Server metadata",
        ["feature_flags"] = "Feature flags",
        ["client_advertise"] = "Advertising",
        ["connect_error_reports"] = "Connect error reports",
        ["reconnect_error_reports"] = "Connect error reports",
        ["https"] = "HTTPS monitoring",
        ["https_port"] = "HTTPS monitoring",
        ["prof_port"] = "Profiling",
        ["prof_block_rate"] = "Profiling",
        ["syslog"] = "Syslog",
        ["remote_syslog"] = "Syslog",
        ["logtime_utc"] = "UTC log timestamps",
        ["logfile_size_limit"] = "Log file rotation",
        ["log_size_limit"] = "Log file rotation",
        ["logfile_max_num"] = "Log file rotation",
        ["log_max_num"] = "Log file rotation",
        ["max_traced_msg_len"] = "Trace truncation",
        ["disable_sublist_cache"] = "Disabling the subscription cache",
        ["no_sublist_cache"] = "Disabling the subscription cache",
        ["no_fast_producer_stall"] = "Fast producer stalls",
        ["write_timeout"] = "Write timeout policies",
        ["proxy_protocol"] = "The PROXY protocol",
    };

    // The features met, in the order first met, each with where it was first asked for and every key that asked.
    private readonly List<(string Feature, ConfPosition Position, List<string> Keys)> ignored = [];

    /// <summary>Ignores a top-level entry if it is one of <see cref="FeatureOfKey"/>.</summary>
    /// <returns>Whether it was.</returns>
    public bool TryIgnore(ConfEntry entry)
    {
        if (!FeatureOfKey.TryGetValue(entry.Key, out var feature))
        {
            return false;
        }

        Ignore(entry, feature);
        return true;
    }

    /// <summary>Ignores an entry of <paramref name="feature"/>; its notice will name the entry's key.</summary>
    public void Ignore(ConfEntry entry, string feature)
    {
        foreach (var (name, _, keys) in ignored)
        {
            if (name == feature)
            {
                keys.Add(entry.Key);
                return;
            }
        }

        ignored.Add((feature, entry.KeyPosition, [entry.Key]));
    }

    /// <summary>Adds one notice per ignored feature, in the order the features were first met.</summary>
    public void Report(ConfMappingBuilder output)
    {
        foreach (var (feature, position, keys) in ignored)
        {
            var names = string.Join(", ", keys.Select(k => $"\"{k}\""));
            var notice = $"{feature}: not supported yet, ignoring {names}";
            output.Unsupported(position, notice);
        }
    }
}
