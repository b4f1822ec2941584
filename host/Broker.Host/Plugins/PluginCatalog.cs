using System.Reflection;
using Broker.Abstractions;
using Broker.Core;
using Broker.Host.Configuration;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Broker.Host.Plugins;

/// <summary>
/// Finds and loads the plugins of a plugins folder: one sub-folder per plugin, <c>&lt;Name&gt;/&lt;Name&gt;.dll</c>,
/// each in its own <see cref="PluginLoadContext"/>. A plugin that cannot be used is logged as an error naming it and
/// skipped; the host never fails because of one.
/// </summary>
/// <remarks>
/// Checks, in order: the main assembly exists and is a .NET assembly; it was compiled against a contract this
/// host provides (read from metadata, before loading); it carries <see cref="BrokerPluginAttribute"/> whose startup
/// type implements <see cref="IBrokerPlugin"/>; its manifest's minimum contract is provided; its id is not taken;
/// its startup type can be created and its <see cref="IBrokerPlugin.ConfigureServices"/> runs without throwing.
/// </remarks>
internal sealed class PluginCatalog
{
    private readonly IConfiguration configuration;
    private readonly ILogger logger;

    /// <summary>Creates a catalog.</summary>
    /// <param name="configuration">The host configuration; each plugin gets its <c>Plugins:&lt;Id&gt;</c> section.</param>
    /// <param name="logger">Where refusals are logged.</param>
    public PluginCatalog(IConfiguration configuration, ILogger logger)
    {
        this.configuration = configuration;
        this.logger = logger;
    }

    /// <summary>Loads every usable plugin under <paramref name="directory"/>, in folder-name order.</summary>
    /// <param name="directory">The plugins folder.</param>
    /// <param name="configured">Whether the folder was configured explicitly (a missing one is then a warning).</param>
    /// <returns>The loaded plugins, ready for <see cref="BrokerServer.AddPlugin"/>.</returns>
    public IReadOnlyList<LoadedPlugin> Load(string directory, bool configured)
    {
        ArgumentNullException.ThrowIfNull(directory);
        var path = Path.GetFullPath(directory);
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

            return [];
        }

        var loaded = new List<LoadedPlugin>();
        foreach (var folder in Directory.GetDirectories(path).Order(StringComparer.Ordinal))
        {
            if (TryLoad(folder, loaded) is { } plugin)
            {
                loaded.Add(plugin);
            }
        }

        return loaded;
    }

    /// <summary>
    /// The ids of configured plugin sections (<c>Plugins:&lt;Id&gt;</c> with any setting) that no loaded plugin
    /// claims. The host refuses to start with one: a <c>tls</c> block whose plugin is missing, or was skipped because
    /// its settings were wrong, must not leave the broker serving clear text.
    /// </summary>
    /// <param name="configuration">The host configuration.</param>
    /// <param name="loaded">The plugins loaded.</param>
    /// <returns>The unclaimed ids, in configuration order.</returns>
    public static IReadOnlyList<string> Unclaimed(IConfiguration configuration, IEnumerable<LoadedPlugin> loaded)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        var ids = loaded.Select(p => p.Manifest.Id).ToHashSet(StringComparer.OrdinalIgnoreCase);
        return [.. configuration.GetSection(HostConfiguration.PluginsSection).GetChildren()
            .Where(section => (section.Value is not null || section.GetChildren().Any()) && !ids.Contains(section.Key))
            .Select(section => section.Key)];
    }

    private LoadedPlugin? TryLoad(string folder, List<LoadedPlugin> loaded)
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
            return Create(name, folder, assemblyPath, loaded);
        }
#pragma warning disable CA1031 // Whatever a plugin throws while loading, the host logs it and goes on without it.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            var cause = ex is TargetInvocationException { InnerException: { } inner } ? inner : ex;
            PluginLog.LoadFailed(logger, name, cause.Message, cause);
            return null;
        }
    }

    private LoadedPlugin? Create(string name, string folder, string assemblyPath, List<LoadedPlugin> loaded)
    {
        var context = new PluginLoadContext(assemblyPath);
        var assembly = context.LoadFromAssemblyPath(assemblyPath);
        var manifest = PluginManifests.Read(assembly);
        if (manifest is null)
        {
            PluginLog.NoAttribute(logger, name);
            return null;
        }

        if (!BrokerContract.IsCompatible(manifest.MinimumContractVersion, BrokerContract.Version))
        {
            PluginLog.ManifestNeedsNewerContract(logger, name, manifest.MinimumContractVersion.ToString(), BrokerContract.Version.ToString());
            return null;
        }

        if (loaded.FirstOrDefault(p => string.Equals(p.Manifest.Id, manifest.Id, StringComparison.OrdinalIgnoreCase)) is { } other)
        {
            PluginLog.DuplicateId(logger, name, manifest.Id, other.Folder);
            return null;
        }

        var startupType = assembly.GetCustomAttribute<BrokerPluginAttribute>()!.StartupType;
        if (!typeof(IBrokerPlugin).IsAssignableFrom(startupType))
        {
            PluginLog.NotAPlugin(logger, name, startupType.FullName ?? startupType.Name);
            return null;
        }

        var startup = (IBrokerPlugin)Activator.CreateInstance(startupType)!;
        var services = new ServiceCollection();
        try
        {
            startup.ConfigureServices(services, new PluginContext(manifest, configuration.GetSection(HostConfiguration.PluginsSection + ":" + manifest.Id)));
        }
#pragma warning disable CA1031 // A plugin's registration code may throw anything; the plugin is skipped, the host goes on.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            PluginLog.ConfigureFailed(logger, name, ex.Message, ex);
            return null;
        }

        PluginLog.Found(logger, manifest.Id, manifest.Version.ToString(), folder);
        return new LoadedPlugin(manifest, folder, [.. services]);
    }
}
