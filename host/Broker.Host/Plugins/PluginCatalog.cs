using System.Reflection;
using Broker.Abstractions;
using Broker.Core;
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
/// <see cref="Discover"/> checks each plugin without running its code and collects the blocks it reads; once the
/// configuration is built, <see cref="Configure"/> creates each startup type and lets it register its services.</para>
/// <para>Checks, in order: the main assembly exists and is a .NET assembly; it was compiled against a contract this
/// host provides (read from metadata, before loading); it carries <see cref="BrokerPluginAttribute"/> whose startup
/// type implements <see cref="IBrokerPlugin"/>; its manifest's minimum contract is provided; its id and its
/// configuration blocks are not taken; its startup type can be created and its
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

        var found = new List<PluginCandidate>();
        foreach (var folder in Directory.GetDirectories(path).Order(StringComparer.Ordinal))
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

        Version? contract;
        try
        {
            contract = ContractReference.Read(assemblyPath);
        }
        catch (Exception ex) when (ex is BadImageFormatException or IOException or UnauthorizedAccessException)
        {
            PluginLog.NotAnAssembly(logger, name, assemblyPath, ex.Message);
            return null;
        }

        if (contract is null)
        {
            PluginLog.NoContractReference(logger, name);
            return null;
        }

        if (!BrokerContract.IsCompatible(contract, BrokerContract.Version))
        {
            PluginLog.IncompatibleContract(logger, name, contract.ToString(), BrokerContract.Version.ToString());
            return null;
        }

        try
        {
            return Inspect(name, folder, assemblyPath, found, blocks);
        }
#pragma warning disable CA1031 // Whatever loading a plugin throws, the host logs it and goes on without it.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            PluginLog.LoadFailed(logger, name, ex.Message, ex);
            return null;
        }
    }

    // Loads the main assembly into the plugin's context and reads its attribute; no plugin code runs (loading an
    // assembly runs none, and the attribute is the contract's own type).
    private PluginCandidate? Inspect(string name, string folder, string assemblyPath, List<PluginCandidate> found, PluginBlocks blocks)
    {
        var context = PluginLoaders.Create(assemblyPath);
        var assembly = context.LoadFromAssemblyPath(assemblyPath);
        var manifest = PluginManifests.Read(assembly);
        var attribute = assembly.GetCustomAttribute<BrokerPluginAttribute>();
        if (manifest is null || attribute is null)
        {
            PluginLog.NoAttribute(logger, name);
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

        if (!typeof(IBrokerPlugin).IsAssignableFrom(attribute.StartupType))
        {
            PluginLog.NotAPlugin(logger, name, attribute.StartupType.FullName ?? attribute.StartupType.Name);
            return null;
        }

        if (!ClaimBlocks(name, manifest.Id, attribute, blocks))
        {
            return null;
        }

        PluginLog.Found(logger, manifest.Id, manifest.Version.ToString(), folder);
        return new PluginCandidate(name, folder, manifest, attribute.StartupType, context);
    }

    // The plugin's block (its id in lower case, nats-server's style, and its aliases) and its other top-level keys. A
    // key the broker reads itself is not claimed (a warning: the plugin still loads, its block just cannot be in the
    // file); a key another plugin reads refuses this plugin, as a duplicate id does.
    internal bool ClaimBlocks(string name, string id, BrokerPluginAttribute attribute, PluginBlocks blocks)
    {
        var claims = new List<(string Key, bool Whole)> { (id.ToLowerInvariant(), true) };
        claims.AddRange((attribute.ConfigurationAliases ?? []).Select(alias => (alias, true)));
        claims.AddRange((attribute.ConfigurationKeys ?? []).Select(key => (key, false)));
        var accepted = new List<(string Key, bool Whole)>();
        foreach (var (key, whole) in claims.DistinctBy(c => c.Key, StringComparer.OrdinalIgnoreCase))
        {
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
