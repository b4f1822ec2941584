using Broker.Abstractions;
using Microsoft.Extensions.DependencyInjection;

namespace Broker.Host.Plugins;

/// <summary>
/// A plugin the catalog loaded and whose services it already collected: the broker gets this instead of the
/// plugin's startup object, and it adds the collected registrations. Collecting them first means a plugin whose
/// <c>ConfigureServices</c> throws is skipped whole, before the broker sees half of its registrations.
/// </summary>
internal sealed class LoadedPlugin : IBrokerPlugin
{
    private readonly IReadOnlyList<ServiceDescriptor> services;

    public LoadedPlugin(PluginManifest manifest, string folder, IReadOnlyList<ServiceDescriptor> services)
    {
        Manifest = manifest;
        Folder = folder;
        this.services = services;
    }

    /// <summary>The plugin's manifest.</summary>
    public PluginManifest Manifest { get; }

    /// <summary>The folder it was loaded from.</summary>
    public string Folder { get; }

    /// <summary>The services it registered.</summary>
    public IReadOnlyList<ServiceDescriptor> Services => services;

    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        ArgumentNullException.ThrowIfNull(services);
        foreach (var descriptor in this.services)
        {
            services.Add(descriptor);
        }
    }
}
