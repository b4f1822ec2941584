using Broker.Abstractions;
using McMaster.NETCore.Plugins;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Primitives;

namespace Broker.Host.Plugins;

/// <summary>
/// Creates the McMaster.NETCore.Plugins loader of one plugin: its own load context, in which the plugin's assemblies
/// and native libraries resolve from its folder through its <c>.deps.json</c>, while the contract and the
/// <c>Microsoft.Extensions</c> abstractions it exchanges with the broker come from the host.
/// </summary>
/// <remarks>
/// <para>Sharing is explicit: the assemblies of <see cref="SharedTypes"/> (and the assemblies they reference, which
/// McMaster adds so that their types stay one) resolve from the host, whatever copy the plugin's folder carries; every
/// other assembly the plugin carries is its own, even when the host has another version of it.
/// <c>PreferSharedTypes</c> is deliberately off: it would make the host's copy of every assembly win, even a different
/// major version of a library the plugin was built against.</para>
/// <para>Not unloadable: a plugin stays loaded for the life of the process (upgrade = restart), because caches keyed by
/// type (logging categories, JSON metadata) would keep a collectible context alive anyway.</para>
/// </remarks>
internal static class PluginLoaders
{
    /// <summary>One type of each assembly shared with plugins.</summary>
    public static IReadOnlyList<Type> SharedTypes { get; } =
    [
        typeof(IBrokerPlugin),      // Broker.Abstractions, the contract
        typeof(IServiceCollection), // Microsoft.Extensions.DependencyInjection.Abstractions
        typeof(ILogger),            // Microsoft.Extensions.Logging.Abstractions
        typeof(IConfiguration),     // Microsoft.Extensions.Configuration.Abstractions
        typeof(IHostedService),     // Microsoft.Extensions.Hosting.Abstractions
        typeof(IOptions<>),         // Microsoft.Extensions.Options
        typeof(IChangeToken),       // Microsoft.Extensions.Primitives
    ];

    /// <summary>Creates the loader of a plugin's main assembly; nothing of the plugin is loaded yet.</summary>
    /// <param name="assemblyPath">The main assembly, a full path.</param>
    /// <returns>The loader.</returns>
    public static PluginLoader Create(string assemblyPath) =>
        PluginLoader.CreateFromAssemblyFile(assemblyPath, [.. SharedTypes], config =>
        {
            config.PreferSharedTypes = false;
            config.IsUnloadable = false;
        });
}
