using System.Diagnostics.CodeAnalysis;

namespace Broker.Host.Configuration.ConfigFile;

/// <summary>
/// Which top-level keys of a nats-server configuration file the loaded plugins read, and where each goes: a plugin's
/// block (named like its id, any letter case, or one of its <c>ConfigurationAliases</c>) becomes its section
/// <c>Plugins:&lt;Id&gt;</c>; each of its <c>ConfigurationKeys</c> becomes <c>Plugins:&lt;Id&gt;:&lt;key&gt;</c>.
/// </summary>
/// <remarks>
/// Keys the broker reads itself (<c>port</c>, <c>authorization</c>, <c>operator</c>, ...) cannot be claimed; keys of
/// nats-server features the broker itself lacks (<c>mqtt</c>, <c>jetstream</c>, <c>store_dir</c>, ...) can, which is
/// how a plugin provides such a feature without a change to the host. Each key has at most one plugin.
/// </remarks>
internal sealed class PluginBlocks
{
    private readonly Dictionary<string, PluginBlock> blocks = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>No plugin reads the file.</summary>
    public static PluginBlocks None { get; } = new();

    /// <summary>The claimed keys.</summary>
    public IReadOnlyCollection<PluginBlock> All => blocks.Values;

    /// <summary>Why a plugin cannot claim <paramref name="key"/>, or <see langword="null"/> when it can.</summary>
    /// <param name="key">A top-level key.</param>
    /// <returns>The reason: the broker reads it, or another plugin does.</returns>
    public string? Conflict(string key) =>
        ConfMapper.IsBrokerKey(key) ? "the broker reads it itself"
        : blocks.TryGetValue(key, out var other) ? $"plugin {other.PluginId} reads it"
        : null;

    /// <summary>Claims <paramref name="key"/> for a plugin; the caller has checked <see cref="Conflict"/>.</summary>
    /// <param name="key">The top-level key.</param>
    /// <param name="pluginId">The plugin's id.</param>
    /// <param name="whole">
    /// Whether the key's value is the plugin's whole section (its block) rather than one setting in it.
    /// </param>
    public void Add(string key, string pluginId, bool whole)
    {
        if (Conflict(key) is { } conflict)
        {
            throw new InvalidOperationException($"\"{key}\" cannot be claimed: {conflict}");
        }

        blocks.Add(key, new PluginBlock(key, pluginId, whole));
    }

    /// <summary>Finds the plugin that reads a top-level key.</summary>
    /// <param name="key">The key as written (any letter case).</param>
    /// <param name="block">The claim.</param>
    /// <returns>Whether a plugin reads it.</returns>
    public bool TryGet(string key, [NotNullWhen(true)] out PluginBlock? block) => blocks.TryGetValue(key, out block);

    /// <summary>
    /// How the configuration file names a plugin's section, for messages: its block's name (<c>tls</c>,
    /// <c>websocket</c>), or <c>Plugins:&lt;Id&gt;</c> when no block is read.
    /// </summary>
    /// <param name="pluginId">The plugin id.</param>
    /// <returns>The name.</returns>
    public string NameOf(string pluginId) =>
        blocks.Values.FirstOrDefault(b => b.Whole && string.Equals(b.PluginId, pluginId, StringComparison.OrdinalIgnoreCase))?.Key
        ?? HostConfiguration.PluginsSection + ":" + pluginId;
}

/// <summary>A top-level key of a configuration file that a plugin reads.</summary>
/// <param name="Key">The key, as the plugin names it.</param>
/// <param name="PluginId">The plugin.</param>
/// <param name="Whole">Whether the value is the plugin's whole section (its block) or one setting in it.</param>
internal sealed record PluginBlock(string Key, string PluginId, bool Whole)
{
    /// <summary>The configuration key the value goes to: <c>Plugins:&lt;Id&gt;</c> or <c>Plugins:&lt;Id&gt;:&lt;Key&gt;</c>.</summary>
    public string Target => HostConfiguration.PluginsSection + ":" + PluginId + (Whole ? "" : ":" + Key);
}
