using Broker.Abstractions;
using Broker.Host.Configuration;
using Broker.Host.Configuration.ConfigFile;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;

namespace Broker.Host.Plugins;

/// <summary>
/// Finds and loads the plugins of a plugins folder: one sub-folder per plugin, <c>&lt;Name&gt;/&lt;Name&gt;.dll</c>,
/// each in its own load context (<see cref="PluginLoaders"/>). A plugin that cannot be used is logged as an error
/// naming it and skipped; the host never fails because of one.
/// </summary>
/// <remarks>
/// <para>Two steps, because a configuration file's blocks belong to the plugins that read them:
/// <see cref="Discover"/> reads each plugin's metadata without loading it and collects the blocks it reads; once the
/// configuration is built, <see cref="Configure"/> loads the plugins the configuration uses (all but those whose
/// <see cref="BrokerPluginAttribute.ActivationKeys"/> find nothing), creates each startup type and lets it register its
/// services.</para>
/// <para>Checks, in order: the main assembly exists and is a .NET assembly; it was compiled against a contract this
/// host provides; it carries <see cref="BrokerPluginAttribute"/>; its manifest's minimum contract is provided; its id
/// and its configuration blocks are not taken (all read from metadata, before loading); then, for a plugin the
/// configuration uses, its startup type implements <see cref="IBrokerPlugin"/> and can be created, and its
/// <see cref="IBrokerPlugin.ConfigureServices"/> runs without throwing.</para>
/// </remarks>
internal sealed partial class PluginCatalog
{
    private readonly ILogger logger;

    /// <summary>Creates a catalog.</summary>
    /// <param name="logger">Where refusals are logged.</param>
    public PluginCatalog(ILogger logger)
    {
        this.logger = logger;
    }

    /// <summary>
    /// The plugins folder the configuration names (<c>Broker:PluginsPath</c>, <c>--plugins</c>), or <c>plugins/</c>
    /// next to the executable.
    /// </summary>
    /// <param name="configuration">The host configuration (any layers that may name the folder).</param>
    /// <param name="baseDirectory">The executable's folder.</param>
    /// <returns>The folder, and whether it was named explicitly (a missing one is then a warning).</returns>
    public static (string Path, bool Configured) FolderOf(IConfiguration configuration, string baseDirectory)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        var named = configuration[HostConfiguration.BrokerSection + ":" + nameof(BrokerHostOptions.PluginsPath)];
        return string.IsNullOrEmpty(named) ? (Path.Combine(baseDirectory, "plugins"), false) : (named, true);
    }

    /// <summary>Checks every plugin under <paramref name="directory"/>, in folder-name order, without running plugin code.</summary>
    /// <param name="directory">The plugins folder.</param>
    /// <param name="configured">Whether the folder was configured explicitly (a missing one is then a warning).</param>
    /// <returns>The usable plugins and the configuration-file blocks they read.</returns>
    public PluginDiscovery Discover(string directory, bool configured)
    {
        ArgumentNullException.ThrowIfNull(directory);
        var path = Path.GetFullPath(directory);
        var blocks = new PluginBlocks();
        if (!Directory.Exists(path))
        {
            if (configured)
            {
                PluginLog.MissingFolder(logger, path);
            }
            else
            {
                PluginLog.NoDefaultFolder(logger, path);
            }

            return new PluginDiscovery(path, [], blocks);
        }

        // Array.Sort rather than LINQ's Order: its sorter and iterator types were ~50 type loads of the start (start9).
        var folders = Directory.GetDirectories(path);
        Array.Sort(folders, StringComparer.Ordinal);
        var found = new List<PluginCandidate>();
        foreach (var folder in folders)
        {
            if (TryDiscover(folder, found, blocks) is { } candidate)
            {
                found.Add(candidate);
            }
        }

        return new PluginDiscovery(path, found, blocks);
    }

    private PluginCandidate? TryDiscover(string folder, List<PluginCandidate> found, PluginBlocks blocks)
    {
        var name = Path.GetFileName(folder);
        var assemblyPath = Path.Combine(folder, name + ".dll");
        if (!File.Exists(assemblyPath))
        {
            PluginLog.MissingAssembly(logger, name, assemblyPath);
            return null;
        }

        // The build's manifest when it still describes the file; the assembly's own metadata otherwise.
        PluginMetadata metadata;
        try
        {
            metadata = PluginManifestFile.TryRead(assemblyPath) ?? PluginMetadata.Read(assemblyPath);
        }
        catch (Exception ex) when (ex is BadImageFormatException or IOException or UnauthorizedAccessException)
        {
            PluginLog.NotAnAssembly(logger, name, assemblyPath, ex.Message);
            return null;
        }

        if (metadata.ReferencedContract is not { } contract)
        {
            PluginLog.NoContractReference(logger, name);
            return null;
        }

        if (!BrokerContract.IsCompatible(contract, BrokerContract.Version))
        {
            PluginLog.IncompatibleContract(logger, name, contract.ToString(), BrokerContract.Version.ToString());
            return null;
        }

        if (metadata.Attribute is not { } declaration)
        {
            PluginLog.NoAttribute(logger, name);
            return null;
        }

        PluginManifest manifest;
        try
        {
            manifest = declaration.ToManifest(contract);
        }
        catch (Exception ex) when (ex is FormatException or ArgumentException or OverflowException)
        {
            PluginLog.LoadFailed(logger, name, ex.Message, ex);
            return null;
        }

        if (!BrokerContract.IsCompatible(manifest.MinimumContractVersion, BrokerContract.Version))
        {
            PluginLog.ManifestNeedsNewerContract(logger, name, manifest.MinimumContractVersion.ToString(), BrokerContract.Version.ToString());
            return null;
        }

        if (found.FirstOrDefault(p => string.Equals(p.Manifest.Id, manifest.Id, StringComparison.OrdinalIgnoreCase)) is { } other)
        {
            PluginLog.DuplicateId(logger, name, manifest.Id, other.Folder);
            return null;
        }

        if (!ValidActivationKeys(name, declaration.ActivationKeys)
            || !ClaimBlocks(name, manifest.Id, declaration.ConfigurationAliases, declaration.ConfigurationKeys, blocks))
        {
            return null;
        }

        PluginLog.Found(logger, manifest.Id, manifest.Version.ToString(), folder);
        return new PluginCandidate(name, folder, assemblyPath, manifest, declaration.ActivationKeys);
    }

    // A path of ActivationKeys names sections: no empty segment, at least one segment.
    private bool ValidActivationKeys(string name, IReadOnlyList<string>? keys)
    {
        foreach (var key in keys ?? [])
        {
            if (string.IsNullOrWhiteSpace(key) || key.Split(':').Any(string.IsNullOrWhiteSpace))
            {
                PluginLog.BadActivationKey(logger, name, key ?? "");
                return false;
            }
        }

        return true;
    }

    // The plugin's block (its id in lower case, nats-server's style, and its aliases) and its other top-level keys. A
    // key the broker reads itself is not claimed (a warning: the plugin still loads, its block just cannot be in the
    // file); a key another plugin reads refuses this plugin, as a duplicate id does.
    internal bool ClaimBlocks(string name, string id, IReadOnlyList<string>? aliases, IReadOnlyList<string>? keys, PluginBlocks blocks)
    {
        // Loops rather than LINQ's Select and DistinctBy: their instantiations over a tuple are in no ReadyToRun image,
        // and the JIT compiled a dozen methods for them at every start.
        var claims = new List<(string Key, bool Whole)> { (id.ToLowerInvariant(), true) };
        foreach (var alias in aliases ?? [])
        {
            claims.Add((alias, true));
        }

        foreach (var key in keys ?? [])
        {
            claims.Add((key, false));
        }

        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var accepted = new List<(string Key, bool Whole)>();
        foreach (var (key, whole) in claims)
        {
            if (key is not null && !seen.Add(key))
            {
                continue;
            }

            if (string.IsNullOrWhiteSpace(key) || key.Contains(':', StringComparison.Ordinal))
            {
                PluginLog.BadConfigurationKey(logger, name, key ?? "");
                return false;
            }

            if (ConfMapper.IsBrokerKey(key))
            {
                PluginLog.BrokerKeyNotClaimed(logger, name, key);
                continue;
            }

            if (blocks.Conflict(key) is { } conflict)
            {
                PluginLog.BlockTaken(logger, name, key, conflict);
                return false;
            }

            accepted.Add((key, whole));
        }

        foreach (var (key, whole) in accepted)
        {
            blocks.Add(key, id, whole);
        }

        return true;
    }
}
