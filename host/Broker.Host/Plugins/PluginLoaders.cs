using System.Reflection;
using System.Runtime.Loader;
using Broker.Abstractions;
using McMaster.NETCore.Plugins.Loader;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Primitives;

namespace Broker.Host.Plugins;

/// <summary>
/// Creates the McMaster.NETCore.Plugins load context of one plugin: its own context, in which the plugin's assemblies
/// and native libraries resolve from its folder through its <c>.deps.json</c>, while the contract and the
/// <c>Microsoft.Extensions</c> abstractions it exchanges with the broker come from the host.
/// </summary>
/// <remarks>
/// <para>Sharing is explicit: the assemblies of <see cref="SharedTypes"/> (with the libraries they reference and the
/// framework assemblies those reference directly, which McMaster adds so that their types stay one) resolve from the host, whatever copy the plugin's folder carries; every
/// other assembly the plugin carries is its own, even when the host has another version of it. Preferring shared
/// types is deliberately off: it would make the host's copy of every assembly win, even a different major version of
/// a library the plugin was built against.</para>
/// <para>Not unloadable: a plugin stays loaded for the life of the process (upgrade = restart), because caches keyed by
/// type (logging categories, JSON metadata) would keep a collectible context alive anyway.</para>
/// <para>Built with McMaster's <see cref="AssemblyLoadContextBuilder"/>, with the settings its <c>PluginLoader</c>
/// applies, rather than through <c>PluginLoader</c>: that one also reads the plugin's and the host's
/// <c>runtimeconfig.json</c> and <c>runtimeconfig.dev.json</c> for every plugin, with the reflection-based JSON
/// serializer, looking for additional probing paths, and looks the process's main module up to add the runtime
/// package store; about 50 ms of CPU at start-up for six plugins (docs/benchmarks.md, "startup: the first second and
/// restart"). Here McMaster's own reader (<see cref="RuntimeConfigExtensions"/>) reads those files only when they can
/// add a path: a file that names <c>additionalProbingPaths</c>, or any file when a runtime package store exists.</para>
/// </remarks>
internal static class PluginLoaders
{
    private const string RuntimeConfigSuffix = ".runtimeconfig.json";
    private const string DevRuntimeConfigSuffix = ".runtimeconfig.dev.json";

    // The host's runtimeconfig files, as PluginLoader reads them for every plugin; they do not change while it runs.
    private static readonly Lazy<string[]> HostRuntimeConfigs = new(() =>
        Directory.GetFiles(AppContext.BaseDirectory, "*" + RuntimeConfigSuffix).Where(CanAddProbingPaths).ToArray());

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

    // The context the shared assemblies come from: the host's own.
    private static AssemblyLoadContext DefaultContext =>
        AssemblyLoadContext.GetLoadContext(typeof(AssemblyLoadContextBuilder).Assembly) ?? AssemblyLoadContext.Default;

    // The shared assemblies and, transitively, the libraries they reference that are not the runtime's own framework
    // (Microsoft.Extensions.Primitives through Options, FileProviders through Hosting.Abstractions); each is loaded
    // in the default context, once for all plugins. A framework assembly is not walked into (its references are
    // the framework too), but is still shared when a library of this list references it directly.
    private static readonly Lazy<AssemblyName[]> SharedLibraries = new(() =>
    {
        var found = new Dictionary<string, AssemblyName>(StringComparer.Ordinal);
        var pending = new Queue<AssemblyName>(SharedTypes.Select(t => t.Assembly.GetName()));
        while (pending.TryDequeue(out var name))
        {
            if (name.Name is not { } simple || IsFramework(simple) || !found.TryAdd(simple, name))
            {
                continue;
            }

            foreach (var reference in DefaultContext.LoadFromAssemblyName(name).GetReferencedAssemblies())
            {
                pending.Enqueue(reference);
            }
        }

        return [.. found.Values];
    });

    // The runtime's framework (Microsoft.NETCore.App) names its assemblies System, System.*, Microsoft.Win32.*,
    // Microsoft.VisualBasic*, Microsoft.CSharp, mscorlib, netstandard and WindowsBase.
    private static bool IsFramework(string name) =>
        name is "System" or "mscorlib" or "netstandard" or "WindowsBase" or "Microsoft.CSharp"
        || name.StartsWith("System.", StringComparison.Ordinal)
        || name.StartsWith("Microsoft.Win32.", StringComparison.Ordinal)
        || name.StartsWith("Microsoft.VisualBasic", StringComparison.Ordinal);

    /// <summary>Creates the load context of a plugin's main assembly; nothing of the plugin is loaded yet.</summary>
    /// <param name="assemblyPath">The main assembly, a full path.</param>
    /// <returns>The plugin's load context; load its main assembly with <see cref="AssemblyLoadContext.LoadFromAssemblyPath"/>.</returns>
    public static AssemblyLoadContext Create(string assemblyPath)
    {
        // Lazy: for each name given, McMaster shares that assembly and the names of its direct references, and widens
        // the set as the plugin's context resolves shared assemblies. Eager, it would load the whole reference closure
        // of every shared assembly into the default context, again for every plugin: through Options and the
        // contract's own references that is most of the framework (System.Net.Http, Quic, Private.Xml,
        // Reflection.Emit, about 30 assemblies no start uses, docs/benchmarks.md "start6"). The names given are the
        // shared assemblies and the libraries they reference outside the runtime's framework, walked once
        // (SharedLibraries): the same libraries are shared as before, whatever order the plugin asks for them in.
        var builder = new AssemblyLoadContextBuilder()
            .SetMainAssemblyPath(assemblyPath)
            .SetDefaultContext(DefaultContext)
            .IsLazyLoaded(true);
        foreach (var name in SharedLibraries.Value)
        {
            builder.PreferDefaultLoadContextAssembly(name);
        }

        // PluginLoader's order: the plugin's file, then the host's.
        var pluginConfig = Path.ChangeExtension(assemblyPath, null) + RuntimeConfigSuffix;
        if (CanAddProbingPaths(pluginConfig))
        {
            builder.TryAddAdditionalProbingPathFromRuntimeConfig(pluginConfig, includeDevConfig: true, out _);
        }

        foreach (var hostConfig in HostRuntimeConfigs.Value)
        {
            builder.TryAddAdditionalProbingPathFromRuntimeConfig(hostConfig, includeDevConfig: true, out _);
        }

        return builder.Build();
    }

    // Whether McMaster's reader could add a probing path from this runtimeconfig.json: its additionalProbingPaths or
    // those of the .dev.json beside it, or the runtime package store (dotnet/store/<arch>/<tfm>), which it adds for a
    // file naming a target framework when the process is the dotnet executable.
    private static bool CanAddProbingPaths(string runtimeConfig) =>
        RuntimePackageStoreExists
        || NamesProbingPaths(runtimeConfig)
        || NamesProbingPaths(runtimeConfig[..^RuntimeConfigSuffix.Length] + DevRuntimeConfigSuffix);

    private static bool RuntimePackageStoreExists { get; } =
        Environment.ProcessPath is { } process
        && string.Equals(Path.GetFileNameWithoutExtension(process), "dotnet", StringComparison.OrdinalIgnoreCase)
        && Path.GetDirectoryName(process) is { } home
        && Directory.Exists(Path.Combine(home, "store"));

    private static bool NamesProbingPaths(string file)
    {
        try
        {
            return File.Exists(file) && File.ReadAllText(file).Contains("additionalProbingPaths", StringComparison.OrdinalIgnoreCase);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // McMaster's reader skips a file it cannot read.
            return false;
        }
    }
}
