using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile;

// Blocks handed to plugins, features we do not have yet (accepted with a notice), and security settings we cannot
// enforce (errors).
internal sealed partial class ConfMapper
{
    // nats-server keys that the broker's own plugins serve. Without the plugin the file would ask for something the
    // broker then does not do (serve clear text where the file says TLS), so an unclaimed one is an error.
    private static readonly Dictionary<string, string> PluginFeatures = new(StringComparer.OrdinalIgnoreCase)
    {
        ["tls"] = "Tls",
        ["allow_non_tls"] = "Tls",
        ["websocket"] = "WebSocket",
        ["ws"] = "WebSocket",
        ["jetstream"] = "JetStream",
        ["js"] = "JetStream",
        ["store_dir"] = "JetStream",
        ["storedir"] = "JetStream",
        ["default_js_domain"] = "JetStream",
    };

    // nats-server's types of its keys that plugins read: a value of another type gets nats-server's message, whether or
    // not the plugin is loaded, before any plugin sees it.
    private static readonly Dictionary<string, (Type Type, string GoType)> PluginValueTypes = new(StringComparer.OrdinalIgnoreCase)
    {
        ["tls"] = (typeof(ConfMap), "map[string]interface {}"),
        ["websocket"] = (typeof(ConfMap), "map[string]interface {}"),
        ["ws"] = (typeof(ConfMap), "map[string]interface {}"),
        ["mqtt"] = (typeof(ConfMap), "map[string]interface {}"),
        ["allow_non_tls"] = (typeof(ConfBool), "bool"),
    };

    // Where nats-server reads the store directory: at the top level, or as one of these in the jetstream block.
    private static readonly HashSet<string> StoreDirectoryKeys = new(["store_dir", "storedir", "store"], StringComparer.OrdinalIgnoreCase);

    // Top-level keys of nats-server features this broker does not have yet, with the feature named in the notice.
    // Ignoring them changes no security property: a client simply cannot use the feature.
    internal static readonly Dictionary<string, string> Unsupported = new(StringComparer.OrdinalIgnoreCase)
    {
        ["mqtt"] = "MQTT",
        ["cluster"] = Clustering.Feature,
        ["gateway"] = "Gateways",
        ["leafnodes"] = "Leaf nodes",
        ["leaf"] = "Leaf nodes",
        ["system_account"] = "The system account",
        ["system"] = "The system account",
        ["no_system_account"] = "The system account",
        ["no_system"] = "The system account",
        ["no_sys_acc"] = "The system account",
        ["server_tags"] = "Server tags",
        ["server_metadata"] = "Server metadata",
        ["feature_flags"] = "Feature flags",
        ["client_advertise"] = "Advertising",
        ["connect_error_reports"] = "Clustering",
        ["reconnect_error_reports"] = "Clustering",
        ["mappings"] = "Subject mappings",
        ["maps"] = "Subject mappings",
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

    // Security settings this broker cannot enforce. Running without them would let in clients the file keeps out,
    // so each is an error naming what is missing.
    private static readonly Dictionary<string, string> Refused = new(StringComparer.OrdinalIgnoreCase)
    {
        ["operator"] = "operator mode (JWT authentication)",
        ["operators"] = "operator mode (JWT authentication)",
        ["root"] = "operator mode (JWT authentication)",
        ["roots"] = "operator mode (JWT authentication)",
        ["root_operator"] = "operator mode (JWT authentication)",
        ["root_operators"] = "operator mode (JWT authentication)",
        ["resolver"] = "account resolvers (JWT authentication)",
        ["account_resolver"] = "account resolvers (JWT authentication)",
        ["accounts_resolver"] = "account resolvers (JWT authentication)",
        ["resolver_tls"] = "account resolvers (JWT authentication)",
        ["resolver_preload"] = "account resolvers (JWT authentication)",
        ["resolver_pinned_accounts"] = "account resolvers (JWT authentication)",
        ["trusted"] = "trusted operator keys (JWT authentication)",
        ["trusted_keys"] = "trusted operator keys (JWT authentication)",
        ["default_sentinel"] = "JWT sentinels",
        ["ocsp"] = "OCSP stapling",
        ["ocsp_cache"] = "OCSP stapling",
        ["proxies"] = "trusted proxies",
    };

    // A top-level key of a feature we do not have, or refuse; false when the key is not one of those.
    private bool TryFeature(ConfEntry entry)
    {
        if (string.Equals(entry.Key, "accounts", StringComparison.OrdinalIgnoreCase))
        {
            Accounts(entry);
            return true;
        }

        if (Refused.TryGetValue(entry.Key, out var refused))
        {
            Forbidden(entry, refused);
            return true;
        }

        if (PluginFeatures.TryGetValue(entry.Key, out var plugin))
        {
            if (HasNatsType(entry))
            {
                Error(entry.KeyPosition, $"\"{entry.Key}\" is read by plugin {plugin}, which is not loaded");
            }

            return true;
        }

        if (Unsupported.TryGetValue(entry.Key, out var feature))
        {
            Ignore(entry, feature);
            return true;
        }

        return false;
    }

    private void Ignore(ConfEntry entry, string feature)
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

    private void Forbidden(ConfEntry entry, string what) =>
        Error(entry.KeyPosition, $"\"{entry.Key}\": not supported ({what}); the broker does not run without a security setting it cannot enforce");

    // Accounts without users only partition subjects, which we do not yet do: a notice. Users inside an account would
    // authenticate clients we have no account for: an error.
    private void Accounts(ConfEntry entry)
    {
        if (!TryMap(entry, out var accounts))
        {
            return;
        }

        var refused = false;
        foreach (var account in accounts.Entries)
        {
            if (account.Value is not ConfMap body)
            {
                continue;
            }

            foreach (var field in body.Entries)
            {
                if (field.Key.Equals("users", StringComparison.OrdinalIgnoreCase) || field.Key.Equals("nkey", StringComparison.OrdinalIgnoreCase))
                {
                    Forbidden(field, "users and nkeys in accounts (multi-tenancy)");
                    refused = true;
                }
            }
        }

        if (!refused)
        {
            Ignore(entry, "Accounts (multi-tenancy)");
        }
    }

    // A top-level key a loaded plugin reads: verbatim into its section.
    private void Plugin(ConfEntry entry, PluginBlock block)
    {
        if (!HasNatsType(entry) || !UniqueStoreDirectory(entry, block))
        {
            return;
        }

        Flatten(block.Target, entry.Value, entry.KeyPosition);
        if (block.Whole && entry.Value is ConfMap { Count: > 0 })
        {
            // The block's own key is set too (to ""), so the plugin can tell a written block from settings that reached
            // its section otherwise: "jetstream { store_dir: x }" turns JetStream on, a top-level store_dir alone does not.
            Set(block.Target, "");
        }
    }

    // nats-server takes the store directory from the top level or from the jetstream block, and refuses both.
    private bool UniqueStoreDirectory(ConfEntry entry, PluginBlock block)
    {
        var written = block.Whole
            ? (entry.Value as ConfMap)?.Entries.FirstOrDefault(e => StoreDirectoryKeys.Contains(e.Key))
            : StoreDirectoryKeys.Contains(entry.Key) ? entry : null;
        if (written is null)
        {
            return true;
        }

        if (storeDirectorySeen)
        {
            Error(written.KeyPosition, "Duplicate 'store_dir' configuration");
            return false;
        }

        storeDirectorySeen = true;
        return true;
    }

    private bool HasNatsType(ConfEntry entry)
    {
        if (PluginValueTypes.TryGetValue(entry.Key, out var expected) && !expected.Type.IsInstanceOfType(entry.Value))
        {
            TypeError(entry.KeyPosition, entry.Value, expected.GoType);
            return false;
        }

        return true;
    }

    // A plugin's value as configuration keys: maps nest with ':', array items are numbered, as the JSON provider does.
    // An empty map or array still sets its key (to ""), so the plugin sees that it was given: an empty tls block must
    // reach the TLS plugin, which refuses it, rather than vanish and leave the broker in clear text.
    private void Flatten(string prefix, ConfValue value, ConfPosition position)
    {
        switch (value)
        {
            case ConfMap { Count: 0 }:
            case ConfArray { Items.Count: 0 }:
                Set(prefix, "");
                break;
            case ConfMap map:
                foreach (var entry in map.Entries)
                {
                    Flatten(prefix + ":" + entry.Key, entry.Value, entry.KeyPosition);
                }

                break;
            case ConfArray array:
                for (var i = 0; i < array.Items.Count; i++)
                {
                    Flatten(prefix + ":" + Format(i), array.Items[i], array.Items[i].Position);
                }

                break;
            default:
                Set(prefix, FormatScalar(value));
                break;
        }

        // Where a plugin's setting was written, so that a plugin refusing it can be pointed at the line.
        positions[prefix] = position;
    }
}
