using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile;

// Blocks handed to plugins, features we do not have yet (accepted with a notice), and security settings we cannot
// enforce (errors).
internal sealed partial class ConfMapper
{
    /// <summary>The plugin id whose section receives the <c>tls</c> block (nats-server key names, verbatim).</summary>
    public const string TlsPluginId = "Tls";

    /// <summary>The plugin id whose section receives the <c>websocket</c> block (nats-server key names, verbatim).</summary>
    public const string WebSocketPluginId = "WebSocket";

    // Top-level keys of nats-server features this broker does not have yet, with the feature named in the notice.
    // Ignoring them changes no security property: a client simply cannot use the feature.
    private static readonly Dictionary<string, string> Unsupported = new(StringComparer.OrdinalIgnoreCase)
    {
        ["default_js_domain"] = "JetStream domains",
        ["mqtt"] = "MQTT",
        ["cluster"] = "Clustering",
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

    // The tls block goes to the TLS plugin as is; an empty block would silently mean "no TLS", so it is an error.
    private void Tls(ConfEntry entry)
    {
        if (!TryMap(entry, out var block))
        {
            return;
        }

        if (block.Count == 0)
        {
            Error(entry.KeyPosition, "missing 'cert_file' in tls config");
            return;
        }

        Flatten(PluginKey(TlsPluginId), block);
    }

    // A top-level key in nats-server, a TLS setting for us.
    private void AllowNonTls(ConfEntry entry)
    {
        if (TryBool(entry, out var value))
        {
            Set(PluginKey(TlsPluginId) + ":allow_non_tls", Format(value));
        }
    }

    // jetstream: true | enabled | { store_dir, max_memory_store, max_file_store, domain, enabled }; the rest of
    // nats-server's block (cipher, sync_interval, limits, ...) concerns features we do not have yet: a notice.
    private void JetStream(ConfEntry entry)
    {
        var enabledKey = Key(nameof(BrokerHostOptions.JetStream));
        switch (entry.Value)
        {
            case ConfString text:
                Set(enabledKey, Format(text.Value is "enabled" or "enable" or "true"));
                return;
            case ConfMap block:
                Set(enabledKey, Format(true));
                foreach (var field in block.Entries)
                {
                    switch (field.Key.ToLowerInvariant())
                    {
                        case "store_dir" or "storedir" or "store":
                            SetString(field, Key(nameof(BrokerHostOptions.StoreDir)));
                            break;
                        case "max_memory_store" or "max_mem_store" or "max_mem":
                            SetInt64(field, Key(nameof(BrokerHostOptions.JetStreamMaxMemory)));
                            break;
                        case "max_file_store" or "max_file":
                            SetInt64(field, Key(nameof(BrokerHostOptions.JetStreamMaxFile)));
                            break;
                        case "domain":
                            SetString(field, Key(nameof(BrokerHostOptions.JetStreamDomain)));
                            break;
                        case "enabled" or "enable":
                            SetBool(field, enabledKey);
                            break;
                        default:
                            Ignore(field, "JetStream option");
                            break;
                    }
                }

                return;
            default:
                SetBool(entry, enabledKey);
                return;
        }
    }

    private void WebSocket(ConfEntry entry)
    {
        if (TryMap(entry, out var block))
        {
            Flatten(PluginKey(WebSocketPluginId), block);
        }
    }

    private static string PluginKey(string id) => HostConfiguration.PluginsSection + ":" + id;

    // Configuration keys of a block: maps nest with ':', array items are numbered, as the JSON provider does.
    private void Flatten(string prefix, ConfValue value)
    {
        switch (value)
        {
            case ConfMap map:
                foreach (var entry in map.Entries)
                {
                    Flatten(prefix + ":" + entry.Key, entry.Value);
                }

                break;
            case ConfArray array:
                for (var i = 0; i < array.Items.Count; i++)
                {
                    Flatten(prefix + ":" + Format(i), array.Items[i]);
                }

                break;
            default:
                Set(prefix, FormatScalar(value));
                break;
        }
    }
}
