using System.Reflection;
using Broker.Abstractions;

namespace Broker.Core;

/// <summary>Reads a plugin's manifest from its assembly's <see cref="BrokerPluginAttribute"/>.</summary>
public static class PluginManifests
{
    /// <summary>
    /// The manifest declared by an assembly, with defaults filled in: the id defaults to the assembly name, the
    /// version to the assembly version and the minimum contract to the <c>Broker.Abstractions</c> version the
    /// assembly references.
    /// </summary>
    /// <param name="assembly">The plugin assembly.</param>
    /// <returns>The manifest, or <see langword="null"/> when the assembly carries no <see cref="BrokerPluginAttribute"/>.</returns>
    /// <exception cref="FormatException">A version in the attribute is not a valid version.</exception>
    public static PluginManifest? Read(Assembly assembly)
    {
        ArgumentNullException.ThrowIfNull(assembly);
        var attribute = assembly.GetCustomAttribute<BrokerPluginAttribute>();
        if (attribute is null)
        {
            return null;
        }

        var name = assembly.GetName();
        var id = string.IsNullOrWhiteSpace(attribute.Id) ? name.Name ?? "plugin" : attribute.Id;
        var version = attribute.Version is null ? name.Version ?? new Version(0, 0) : Version.Parse(attribute.Version);
        var contract = attribute.MinimumContractVersion is null
            ? ReferencedContract(assembly)
            : Version.Parse(attribute.MinimumContractVersion);
        return new PluginManifest(id, version, contract);
    }

    /// <summary>The manifest for a plugin instance (its assembly's attribute, or defaults from its type).</summary>
    /// <param name="plugin">The plugin.</param>
    /// <returns>The manifest.</returns>
    public static PluginManifest For(IBrokerPlugin plugin)
    {
        ArgumentNullException.ThrowIfNull(plugin);
        var assembly = plugin.GetType().Assembly;
        return Read(assembly) ?? new PluginManifest(plugin.GetType().Name, assembly.GetName().Version ?? new Version(0, 0), ReferencedContract(assembly));
    }

    /// <summary>The <c>major.minor</c> of the Broker.Abstractions version an assembly was compiled against.</summary>
    /// <param name="assembly">The assembly.</param>
    /// <returns>The referenced contract version, or the current one when the assembly references none.</returns>
    public static Version ReferencedContract(Assembly assembly)
    {
        ArgumentNullException.ThrowIfNull(assembly);
        var contractName = typeof(BrokerContract).Assembly.GetName().Name;
        var reference = assembly.GetReferencedAssemblies().FirstOrDefault(r => r.Name == contractName);
        return reference?.Version is { } v ? new Version(v.Major, v.Minor) : BrokerContract.Version;
    }
}
