using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Microsoft.Extensions.Configuration;

namespace Broker.JetStream.Internal;

/// <summary>
/// Reads the plugin's section <c>Plugins:JetStream</c> as nats-server reads its <c>jetstream</c> setting: every key is
/// served, refused with the reason, or named in the warning JetStream logs at start (docs/configuration.md lists them).
/// </summary>
internal static class JetStreamOptionsReader
{
    // Keys of the section that are not settings of the jetstream block: the top-level keys the plugin claims.
    private static readonly string[] TopLevelKeys = ["store_dir", "storedir", "default_js_domain"];

    private static readonly string[] ServedKeys =
    [
        "enabled", "enable", "store_dir", "storedir", "store", "max_memory_store", "max_mem_store", "max_mem",
        "max_file_store", "max_file", "domain", "limits", "default_js_domain", "strict",
    ];

    // nats-server keeps the file store's settings in this block; here the file store plugin owns them (the host hands
    // them over from a configuration file's jetstream block). Ignoring them would run unencrypted, or with another
    // durability, than the settings say: refused.
    private static readonly string[] FileStoreKeys = ["cipher", "key", "ek", "encryption_key", "sync_interval", "sync"];

    // Key rotation and TPM-sealed keys: not served by the file store either.
    private static readonly string[] UnservedStoreKeys = ["prev_key", "prev_ek", "prev_encryption_key", "tpm"];

    // Keys that shape clustered JetStream or tune nats-server's internals: a single server has nothing they change.
    private static readonly string[] WarnedKeys =
        ["unique_tag", "max_outstanding_catchup", "extension_hint", "max_buffered_size", "max_buffered_msgs", "request_queue_limit"];

    private static readonly SearchValues<char> NameBreakers = SearchValues.Create(" \t\r\n\f.*>");

    private static readonly string[] ServedLimits = ["max_ack_pending", "max_request_batch", "duplicate_window"];

    private static readonly string[] WarnedLimits = ["max_ha_assets"];

    /// <summary>The settings of the section, or <see langword="null"/> when JetStream is not enabled there.</summary>
    /// <exception cref="PluginConfigurationException">A setting is not valid, unknown, or belongs to the file store.</exception>
    public static JetStreamOptions? Read(IConfiguration section)
    {
        if (!IsEnabled(section))
        {
            return null;
        }

        var ignored = new List<string>();
        foreach (var child in section.GetChildren())
        {
            var key = child.Key;
            if (FileStoreKeys.Contains(key, StringComparer.OrdinalIgnoreCase))
            {
                throw section.Refuse(key, $"the file store reads {key} from its own section: write it as Plugins:FileStore:{key} (docs/durability.md)");
            }

            if (UnservedStoreKeys.Contains(key, StringComparer.OrdinalIgnoreCase))
            {
                throw section.Refuse(key, $"{key} is not served: the file store has no key rotation nor TPM-sealed keys (docs/durability.md)");
            }

            if (WarnedKeys.Contains(key, StringComparer.OrdinalIgnoreCase))
            {
                ignored.Add(key);
            }
            else if (!ServedKeys.Contains(key, StringComparer.OrdinalIgnoreCase))
            {
                throw section.Refuse(null, $"unknown field \"{key}\"");
            }
        }

        var limits = section.GetSection("limits");
        foreach (var child in limits.GetChildren())
        {
            if (WarnedLimits.Contains(child.Key, StringComparer.OrdinalIgnoreCase))
            {
                ignored.Add("limits." + child.Key);
            }
            else if (!ServedLimits.Contains(child.Key, StringComparer.OrdinalIgnoreCase))
            {
                throw limits.Refuse(null, $"unknown field \"{child.Key}\"");
            }
        }

        var domain = section["domain"];
        if (!string.IsNullOrEmpty(domain) && DomainError(domain) is { } invalid)
        {
            throw section.Refuse("domain", invalid);
        }

        var duplicateWindow = limits.GetDuration("duplicate_window") ?? TimeSpan.Zero;
        return new JetStreamOptions
        {
            StoreDirectory = section["store_dir"] ?? section["storedir"] ?? section["store"],
            MaxMemoryStore = section.GetSize("max_memory_store") ?? section.GetSize("max_mem_store") ?? section.GetSize("max_mem") ?? 0,
            MaxFileStore = section.GetSize("max_file_store") ?? section.GetSize("max_file") ?? 0,
            Domain = string.IsNullOrEmpty(domain) ? null : domain,
            MaxAckPending = limits.GetInt32("max_ack_pending") ?? 0,
            MaxRequestBatch = limits.GetInt32("max_request_batch") ?? 0,
            MaxDuplicateWindow = duplicateWindow,
            Strict = section.GetBool("strict") ?? false,
            IgnoredSettings = ignored,
        };
    }

    // "jetstream: enabled" / "jetstream: false" arrive as the section's own value, a written block as "" beside its
    // keys, "-js" as "enabled: true". A block enables JetStream unless it says "enabled: false"; the top-level store_dir
    // or default_js_domain alone do not, as in nats-server.
    private static bool IsEnabled(IConfiguration section)
    {
        if ((section.GetBool("enabled") ?? section.GetBool("enable")) is { } explicitly)
        {
            return explicitly;
        }

        var value = (section as IConfigurationSection)?.Value;
        if (!string.IsNullOrWhiteSpace(value))
        {
            return value.Trim().ToUpperInvariant() switch
            {
                "ENABLED" or "ENABLE" => true,
                "DISABLED" or "DISABLE" => false,
                _ => ConfigSyntax.TryParseBool(value, out var flag) ? flag
                    : throw section.Refuse(null, $"Expected 'enabled' or 'disabled' for string value, got '{value}'"),
            };
        }

        return value is not null || section.GetChildren().Any(c => !TopLevelKeys.Contains(c.Key, StringComparer.OrdinalIgnoreCase));
    }

    /// <summary>
    /// The top-level <c>default_js_domain { &lt;account&gt;: &lt;domain&gt; }</c>: with one account here, only the global
    /// account (<c>$G</c>) can be named.
    /// </summary>
    /// <exception cref="PluginConfigurationException">Another account, the system account, or an invalid domain.</exception>
    public static Dictionary<string, string> ReadDefaultDomains(IConfiguration section)
    {
        var block = section.GetSection("default_js_domain");
        var domains = new Dictionary<string, string>(StringComparer.Ordinal);
        if (block.Value is { Length: > 0 } scalar)
        {
            throw block.Refuse(null, $"error default_js_domain config: unsupported type string (\"{scalar}\")");
        }

        foreach (var entry in block.GetChildren())
        {
            if (entry.Key is "$SYS")
            {
                throw block.Refuse(entry.Key, "system account \"$SYS\" can not be in default_js_domain");
            }

            if (entry.Key != BrokerAccount.GlobalName)
            {
                throw block.Refuse(entry.Key, $"in non operator mode, `default_js_domain` references non existing account \"{entry.Key}\"");
            }

            var domain = entry.Value ?? "";
            if (domain.Length > 0 && DomainError(domain) is not null)
            {
                throw block.Refuse(entry.Key, $"default_js_domain contains account \"{entry.Key}\" with invalid domain name \"{domain}\"");
            }

            domains[entry.Key] = domain;
        }

        return domains;
    }

    // nats-server validateJetStreamOptions: the domain becomes a subject token.
    private static string? DomainError(string domain)
    {
        var api = $"$JS.{domain}.API.>";
        if (!Subjects.IsValid(Encoding.UTF8.GetBytes(api)))
        {
            return $"invalid domain name: derived \"{api}\" is not a valid subject";
        }

        return domain.AsSpan().IndexOfAny(NameBreakers) >= 0 ? "invalid domain name: may not contain ., * or >" : null;
    }
}
