using Broker.Abstractions;
using Broker.Host.Configuration;
using Broker.Host.Configuration.ConfigFile;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Plugins;

/// <summary>
/// A plugin found in the plugins folder and checked from its assembly's metadata: nothing of it is loaded yet, and
/// nothing is when the configuration does not use it (<see cref="IsUsedBy"/>).
/// </summary>
internal sealed class PluginCandidate
{
    public PluginCandidate(string name, string folder, string assemblyPath, PluginManifest manifest, IReadOnlyList<string>? activationKeys)
    {
        Name = name;
        Folder = folder;
        AssemblyPath = assemblyPath;
        Manifest = manifest;
        ActivationKeys = activationKeys;
    }

    /// <summary>The plugin's folder name, which log lines name it by.</summary>
    public string Name { get; }

    /// <summary>The plugin's folder.</summary>
    public string Folder { get; }

    /// <summary>The main assembly, a full path.</summary>
    public string AssemblyPath { get; }

    /// <summary>The manifest.</summary>
    public PluginManifest Manifest { get; }

    /// <summary><see cref="BrokerPluginAttribute.ActivationKeys"/>: <see langword="null"/> for a plugin that is always loaded.</summary>
    public IReadOnlyList<string>? ActivationKeys { get; }

    /// <summary>
    /// Whether the host loads the plugin with this configuration: always without activation keys, otherwise when its
    /// section <c>Plugins:&lt;Id&gt;</c> or one of its activation keys is present.
    /// </summary>
    /// <param name="configuration">The host configuration.</param>
    /// <returns>Whether to load it.</returns>
    public bool IsUsedBy(IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        if (ActivationKeys is null)
        {
            return true;
        }

        return Present(configuration, [HostConfiguration.PluginsSection, Manifest.Id])
            || ActivationKeys.Any(key => Present(configuration, key.Split(':')));
    }

    // A section is present with a value (an empty block sets "") or any key below it; "*" is any one child.
    private static bool Present(IConfiguration node, ReadOnlySpan<string> segments)
    {
        if (segments.IsEmpty)
        {
            return node is IConfigurationSection section && section.Exists();
        }

        if (segments[0] != "*")
        {
            return Present(node.GetSection(segments[0]), segments[1..]);
        }

        foreach (var child in node.GetChildren())
        {
            if (Present(child, segments[1..]))
            {
                return true;
            }
        }

        return false;
    }
}

/// <summary>What the plugin catalog found in a plugins folder.</summary>
/// <param name="Folder">The plugins folder, a full path.</param>
/// <param name="Candidates">The usable plugins, in folder-name order.</param>
/// <param name="Blocks">The configuration-file blocks and keys they read.</param>
internal sealed record PluginDiscovery(string Folder, IReadOnlyList<PluginCandidate> Candidates, PluginBlocks Blocks)
{
    /// <summary>No plugins (for commands that load none).</summary>
    public static PluginDiscovery None { get; } = new("", [], PluginBlocks.None);
}
