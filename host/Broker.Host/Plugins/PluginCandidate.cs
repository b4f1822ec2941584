using System.Runtime.Loader;
using Broker.Abstractions;
using Broker.Host.Configuration.ConfigFile;

namespace Broker.Host.Plugins;

/// <summary>
/// A plugin found in the plugins folder and checked without running any of its code: its assembly is loaded into its
/// own context and its manifest read, but its startup type has not been created yet.
/// </summary>
internal sealed class PluginCandidate
{
    public PluginCandidate(string name, string folder, PluginManifest manifest, Type startupType, AssemblyLoadContext loadContext)
    {
        Name = name;
        Folder = folder;
        Manifest = manifest;
        StartupType = startupType;
        LoadContext = loadContext;
    }

    /// <summary>The plugin's folder name, which log lines name it by.</summary>
    public string Name { get; }

    /// <summary>The plugin's folder.</summary>
    public string Folder { get; }

    /// <summary>The manifest.</summary>
    public PluginManifest Manifest { get; }

    /// <summary>The type implementing <see cref="IBrokerPlugin"/>.</summary>
    public Type StartupType { get; }

    /// <summary>The plugin's own load context (McMaster's); kept for the life of the process.</summary>
    public AssemblyLoadContext LoadContext { get; }
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
