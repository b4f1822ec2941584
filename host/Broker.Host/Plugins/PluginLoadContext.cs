using System.Reflection;
using System.Runtime.Loader;

namespace Broker.Host.Plugins;

/// <summary>
/// The load context of one plugin: the plugin's own assemblies and native libraries come from its folder (resolved
/// through its <c>.deps.json</c>), while the contract and the <c>Microsoft.Extensions.*</c> abstractions come from
/// the host, so <c>IBrokerPlugin</c>, <c>IServiceCollection</c> or <c>ILogger</c> are the same types on both sides.
/// </summary>
/// <remarks>
/// Not collectible: a plugin stays loaded for the life of the process (upgrade = restart), because caches keyed by
/// type (logging categories, JSON metadata) would keep a collectible context alive anyway.
/// </remarks>
internal sealed class PluginLoadContext : AssemblyLoadContext
{
    private const string ContractAssembly = "Broker.Abstractions";

    private readonly AssemblyDependencyResolver resolver;

    public PluginLoadContext(string mainAssemblyPath)
        : base("plugin:" + Path.GetFileNameWithoutExtension(mainAssemblyPath), isCollectible: false)
    {
        resolver = new AssemblyDependencyResolver(mainAssemblyPath);
    }

    /// <summary>Whether an assembly is shared with the host rather than loaded from the plugin's folder.</summary>
    /// <param name="name">The assembly's simple name.</param>
    /// <returns><see langword="true"/> for the contract and the Microsoft.Extensions abstractions.</returns>
    public static bool IsShared(string? name) => name is not null
        && (name == ContractAssembly
            || name is "Microsoft.Extensions.Options" or "Microsoft.Extensions.Primitives"
            || (name.StartsWith("Microsoft.Extensions.", StringComparison.Ordinal) && name.EndsWith(".Abstractions", StringComparison.Ordinal)));

    protected override Assembly? Load(AssemblyName assemblyName)
    {
        ArgumentNullException.ThrowIfNull(assemblyName);
        if (IsShared(assemblyName.Name))
        {
            // Prefer the host's copy, even when the plugin folder carries one: two copies would be two sets of types.
            // Only when the host has none does the plugin's own copy load.
            try
            {
                return Default.LoadFromAssemblyName(assemblyName);
            }
            catch (FileNotFoundException)
            {
            }
            catch (FileLoadException)
            {
            }
        }

        var path = resolver.ResolveAssemblyToPath(assemblyName);

        // Null falls back to the default context: framework assemblies and anything else the host has.
        return path is null ? null : LoadFromAssemblyPath(path);
    }

    protected override IntPtr LoadUnmanagedDll(string unmanagedDllName)
    {
        var path = resolver.ResolveUnmanagedDllToPath(unmanagedDllName);
        return path is null ? IntPtr.Zero : LoadUnmanagedDllFromPath(path);
    }
}
