using System.Reflection;
using System.Runtime.Loader;

namespace Broker.Host.Plugins;

/// <summary>
/// One plugin's load context: its assemblies and native libraries resolve from its folder through its
/// <c>.deps.json</c> (<see cref="AssemblyDependencyResolver"/>), except the shared assemblies
/// (<see cref="PluginLoaders.SharedTypes"/> and what they reference), which resolve from the host; an assembly the
/// plugin does not carry (the framework's) comes from the default context. Not collectible.
/// </summary>
/// <remarks>
/// It does what McMaster.NETCore.Plugins' loader did for us, without its start-up cost: that loader read the host's
/// and each plugin's <c>runtimeconfig.json</c> with the reflection-based JSON serializer (about 60 methods compiled
/// and property setters emitted at the first plugin) and loaded every assembly the shared ones reference, recursively,
/// to list their names (about 50 framework assemblies, among them XML, HTTP and QUIC).
/// </remarks>
internal sealed class PluginLoadContext : AssemblyLoadContext
{
    private readonly string mainAssemblyPath;
    private readonly AssemblyDependencyResolver resolver;
    private readonly IReadOnlySet<string> shared;

    /// <summary>Creates the context of a plugin's main assembly; nothing of the plugin is loaded yet.</summary>
    /// <param name="mainAssemblyPath">The main assembly, a full path.</param>
    /// <param name="shared">The names of the assemblies that resolve from the host.</param>
    public PluginLoadContext(string mainAssemblyPath, IReadOnlySet<string> shared)
        : base(Path.GetFileNameWithoutExtension(mainAssemblyPath), isCollectible: false)
    {
        this.mainAssemblyPath = mainAssemblyPath;
        this.shared = shared;
        resolver = new AssemblyDependencyResolver(mainAssemblyPath);
    }

    /// <summary>Loads the plugin's main assembly into this context.</summary>
    /// <returns>The assembly.</returns>
    public Assembly LoadDefaultAssembly() => LoadFromAssemblyPath(mainAssemblyPath);

    /// <inheritdoc/>
    protected override Assembly? Load(AssemblyName assemblyName)
    {
        if (assemblyName.Name is { } name && shared.Contains(name))
        {
            return null;
        }

        return resolver.ResolveAssemblyToPath(assemblyName) is { } path ? LoadFromAssemblyPath(path) : null;
    }

    /// <inheritdoc/>
    protected override IntPtr LoadUnmanagedDll(string unmanagedDllName)
        => resolver.ResolveUnmanagedDllToPath(unmanagedDllName) is { } path ? LoadUnmanagedDllFromPath(path) : IntPtr.Zero;
}
