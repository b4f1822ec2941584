using Broker.Abstractions;
using System.Reflection;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Primitives;

namespace Broker.Host.Plugins;

/// <summary>
/// Creates the load context of one plugin (<see cref="PluginLoadContext"/>), in which the plugin's assemblies
/// and native libraries resolve from its folder through its <c>.deps.json</c>, while the contract and the
/// <c>Microsoft.Extensions</c> abstractions it exchanges with the broker come from the host.
/// </summary>
/// <remarks>
/// <para>Sharing is explicit: the assemblies of <see cref="SharedTypes"/> (and the assemblies they reference, so that
/// their types stay one) resolve from the host, whatever copy the plugin's folder carries; every other assembly the
/// plugin carries is its own, even when the host has another version of it. The host's copy of every assembly does not
/// win (McMaster's <c>PreferSharedTypes</c>, which this replaced, was deliberately off): that would load the host's
/// version even of a different major version of a library the plugin was built against.</para>
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

    /// <summary>
    /// The names of the shared assemblies: those of <see cref="SharedTypes"/> and, transitively, the assemblies they
    /// reference. The references of an assembly the host carries beside itself are followed (loading it, as the host
    /// does anyway); a framework assembly is named without being loaded or followed.
    /// </summary>
    private static readonly Lazy<IReadOnlySet<string>> SharedNames = new(FindSharedNames);

    /// <summary>Creates the load context of a plugin's main assembly; nothing of the plugin is loaded yet.</summary>
    /// <param name="assemblyPath">The main assembly, a full path.</param>
    /// <returns>The load context.</returns>
    public static PluginLoadContext Create(string assemblyPath) => new(assemblyPath, SharedNames.Value);

    private static HashSet<string> FindSharedNames()
    {
        var names = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var pending = new Stack<Assembly>(SharedTypes.Select(t => t.Assembly).Distinct());
        foreach (var assembly in pending)
        {
            names.Add(assembly.GetName().Name!);
        }

        while (pending.TryPop(out var assembly))
        {
            foreach (var reference in assembly.GetReferencedAssemblies())
            {
                if (reference.Name is not { } name || !names.Add(name))
                {
                    continue;
                }

                if (File.Exists(Path.Combine(AppContext.BaseDirectory, name + ".dll")))
                {
                    pending.Push(Assembly.Load(reference));
                }
            }
        }

        return names;
    }
}
