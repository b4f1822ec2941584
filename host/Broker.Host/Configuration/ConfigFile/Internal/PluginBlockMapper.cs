using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// Top-level keys that plugins read (<see cref="PluginBlocks"/>: <c>tls</c>, <c>websocket</c>, <c>jetstream</c>,
/// <c>mqtt</c>, a third party's <c>&lt;id&gt; { }</c>): checked against the type nats-server gives them, then copied
/// verbatim into the plugin's <c>Plugins:&lt;Id&gt;</c> section with where each setting was written. The keys of the
/// broker's own plugins are errors when that plugin is not loaded, and the JetStream store directory may be written
/// once only.
/// </summary>
/// <param name="reader">Reports values of the wrong type.</param>
/// <param name="output">Where values, positions and diagnostics go.</param>
/// <param name="plugins">The blocks the loaded plugins read, to find the file store's.</param>
internal sealed class PluginBlockMapper(ConfValueReader reader, ConfMappingBuilder output, PluginBlocks plugins)
{
    // nats-server keys that the broker's own plugins serve. Without the plugin the file would ask for something the
    // broker then does not do (serve clear text where the file says TLS), so an unclaimed one is an error.
    private static readonly Dictionary<string, string> FirstPartyKeys = new(StringComparer.OrdinalIgnoreCase)
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
    private static readonly Dictionary<string, (Type Type, string GoType)> NatsValueTypes = new(StringComparer.OrdinalIgnoreCase)
    {
        ["tls"] = (typeof(ConfMap), "map[string]interface {}"),
        ["websocket"] = (typeof(ConfMap), "map[string]interface {}"),
        ["ws"] = (typeof(ConfMap), "map[string]interface {}"),
        ["mqtt"] = (typeof(ConfMap), "map[string]interface {}"),
        ["allow_non_tls"] = (typeof(ConfBool), "bool"),
    };

    // Where nats-server reads the store directory: at the top level, or as one of these in the jetstream block.
    private static readonly HashSet<string> StoreDirectoryKeys = new(["store_dir", "storedir", "store"], StringComparer.OrdinalIgnoreCase);

    // nats-server keeps the file store's settings in its jetstream block (2.10's sync_interval, the cipher and key);
    // here the file store plugin reads them, so they go to its section under its own names.
    private static readonly Dictionary<string, string> JetStreamFileStoreKeys = new(StringComparer.OrdinalIgnoreCase)
    {
        ["sync_interval"] = "sync_interval",
        ["sync"] = "sync_interval",
        ["cipher"] = "cipher",
        ["key"] = "key",
        ["ek"] = "key",
        ["encryption_key"] = "key",
    };

    private const string FileStorePlugin = "FileStore";

    // The file store settings written in each block, so one written in both is an error rather than a silent choice.
    private readonly HashSet<string> fileStoreKeysFromJetStream = new(StringComparer.OrdinalIgnoreCase);
    private readonly HashSet<string> fileStoreKeysFromOwnBlock = new(StringComparer.OrdinalIgnoreCase);

    private bool storeDirectorySeen;

    /// <summary>A top-level key a loaded plugin reads: verbatim into its section.</summary>
    public void Map(ConfEntry entry, PluginBlock block)
    {
        if (!HasNatsType(entry) || !UniqueStoreDirectory(entry, block))
        {
            return;
        }

        if (entry.Value is ConfMap { Count: > 0 } settings && IsBlockOf(block, FileStorePlugin))
        {
            foreach (var setting in settings.Entries)
            {
                RefuseWrittenTwice(setting, fileStoreKeysFromOwnBlock, fileStoreKeysFromJetStream, setting.Key);
            }
        }

        if (entry.Value is ConfMap { Count: > 0 } jetStream && IsBlockOf(block, "JetStream")
            && jetStream.Entries.Any(setting => JetStreamFileStoreKeys.ContainsKey(setting.Key)))
        {
            foreach (var setting in jetStream.Entries)
            {
                if (JetStreamFileStoreKeys.TryGetValue(setting.Key, out var storeKey))
                {
                    MoveToFileStore(setting, storeKey);
                }
                else
                {
                    Flatten(block.Target + ":" + setting.Key, setting.Value, setting.KeyPosition);
                }
            }

            output.SetPosition(block.Target, entry.KeyPosition);
        }
        else
        {
            Flatten(block.Target, entry.Value, entry.KeyPosition);
        }

        if (block.Whole && entry.Value is ConfMap { Count: > 0 })
        {
            // The block's own key is set too (to ""), so the plugin can tell a written block from settings that reached
            // its section otherwise: "jetstream { store_dir: x }" turns JetStream on, a top-level store_dir alone does not.
            output.Set(block.Target, "");
        }
    }

    /// <summary>
    /// Refuses a top-level key of one of the broker's own plugins that is not loaded (a value of the wrong type gets
    /// nats-server's message instead).
    /// </summary>
    /// <returns>Whether the key is one of theirs.</returns>
    public bool TryRefuseUnloaded(ConfEntry entry)
    {
        if (!FirstPartyKeys.TryGetValue(entry.Key, out var plugin))
        {
            return false;
        }

        if (HasNatsType(entry))
        {
            output.Error(entry.KeyPosition, $"\"{entry.Key}\" is read by plugin {plugin}, which is not loaded");
        }

        return true;
    }

    // The plugin's whole block under any of its names (jetstream or js).
    private static bool IsBlockOf(PluginBlock block, string pluginId) => block.Whole && string.Equals(block.PluginId, pluginId, StringComparison.OrdinalIgnoreCase);

    // A file store setting written in the jetstream block, as nats-server's files have it: into the file store's section.
    private void MoveToFileStore(ConfEntry setting, string storeKey)
    {
        if (plugins.All.FirstOrDefault(b => IsBlockOf(b, FileStorePlugin)) is not { } fileStore)
        {
            output.Error(setting.KeyPosition, $"\"{setting.Key}\" is read by plugin FileStore, which is not loaded");
            return;
        }

        if (storeKey == "sync_interval" && setting.Value is ConfInteger)
        {
            // nats-server's parseDuration: a bare number is seconds, with its warning (an unquoted 2m is 2,000,000).
            output.Warning(setting.KeyPosition, $"invalid use of field \"{setting.Key}\": {setting.Key} should be converted to a duration");
        }

        if (RefuseWrittenTwice(setting, fileStoreKeysFromJetStream, fileStoreKeysFromOwnBlock, storeKey))
        {
            Flatten(fileStore.Target + ":" + storeKey, setting.Value, setting.KeyPosition);
        }
    }

    // False (and an error) when the other block wrote the setting too.
    private bool RefuseWrittenTwice(ConfEntry setting, HashSet<string> written, HashSet<string> other, string storeKey)
    {
        written.Add(storeKey);
        if (!other.Contains(storeKey))
        {
            return true;
        }

        output.Error(setting.KeyPosition, $"\"{storeKey}\" is written in both the jetstream and the filestore block");
        return false;
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
            output.Error(written.KeyPosition, "Duplicate 'store_dir' configuration");
            return false;
        }

        storeDirectorySeen = true;
        return true;
    }

    private bool HasNatsType(ConfEntry entry)
    {
        if (NatsValueTypes.TryGetValue(entry.Key, out var expected) && !expected.Type.IsInstanceOfType(entry.Value))
        {
            reader.TypeError(entry.KeyPosition, entry.Value, expected.GoType);
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
                output.Set(prefix, "");
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
                output.Set(prefix, Scalar(value));
                break;
        }

        // Where a plugin's setting was written, so that a plugin refusing it can be pointed at the line.
        output.SetPosition(prefix, position);
    }
}
