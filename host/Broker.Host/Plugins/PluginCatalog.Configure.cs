using System.Reflection;
using Broker.Abstractions;
using Broker.Host.Configuration;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;

namespace Broker.Host.Plugins;

// The second step: plugin code runs. A plugin that refuses its settings stops the host; any other failure skips it.
internal sealed partial class PluginCatalog
{
    /// <summary>
    /// Creates each plugin's startup type and collects the services its <see cref="IBrokerPlugin.ConfigureServices"/>
    /// registers with its section <c>Plugins:&lt;Id&gt;</c>.
    /// </summary>
    /// <param name="discovery">The plugins found.</param>
    /// <param name="configuration">The host configuration.</param>
    /// <returns>
    /// The plugins loaded, and the plugins that refused their settings (a <see cref="PluginConfigurationException"/>):
    /// the host must not start with any. A plugin whose startup type cannot be created or whose
    /// <c>ConfigureServices</c> throws anything else is logged and left out.
    /// </returns>
    public PluginConfiguration Configure(PluginDiscovery discovery, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(discovery);
        ArgumentNullException.ThrowIfNull(configuration);
        var loaded = new List<LoadedPlugin>();
        var refusals = new List<PluginRefusal>();
        foreach (var candidate in discovery.Candidates)
        {
            var manifest = candidate.Manifest;
            if (!candidate.IsUsedBy(configuration))
            {
                PluginLog.NotUsed(logger, manifest.Id, string.Join(", ", [HostConfiguration.PluginsSection + ":" + manifest.Id, .. candidate.ActivationKeys ?? []]));
                continue;
            }

            IBrokerPlugin startup;
            try
            {
                if (Load(candidate) is not { } startupType)
                {
                    continue;
                }

                startup = (IBrokerPlugin)Activator.CreateInstance(startupType)!;
            }
#pragma warning disable CA1031 // A plugin's own code may throw anything; the plugin is skipped, the host goes on.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                var cause = ex is TargetInvocationException { InnerException: { } inner } ? inner : ex;
                if (cause is PluginConfigurationException refusal)
                {
                    refusals.Add(new PluginRefusal(manifest.Id, refusal.Message, refusal.Key));
                }
                else
                {
                    PluginLog.LoadFailed(logger, candidate.Name, cause.Message, cause);
                }

                continue;
            }

            // Collected apart, so a plugin that fails halfway leaves none of its registrations behind.
            var services = new ServiceCollection();
            try
            {
                startup.ConfigureServices(services, new PluginContext(manifest, configuration.GetSection(HostConfiguration.PluginsSection + ":" + manifest.Id)));
            }
            catch (PluginConfigurationException ex)
            {
                refusals.Add(new PluginRefusal(manifest.Id, ex.Message, ex.Key));
                continue;
            }
#pragma warning disable CA1031 // As above.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                PluginLog.ConfigureFailed(logger, candidate.Name, ex.Message, ex);
                continue;
            }

            PluginLog.Configured(logger, manifest.Id, manifest.Version.ToString());
            loaded.Add(new LoadedPlugin(manifest, candidate.Folder, [.. services]));
        }

        return new PluginConfiguration(loaded, refusals);
    }

    // Loads the main assembly into the plugin's own context and finds its startup type; no plugin code runs (loading
    // an assembly runs none, and the attribute is the contract's own type). Null when the type is not a plugin. The
    // type is read from the attribute's data, not from an instance: making one sets its named properties through
    // reflection, whose invoke stubs the JIT compiled at every start (6 methods, docs/benchmarks.md "start5").
    private Type? Load(PluginCandidate candidate)
    {
        var assembly = PluginLoaders.Create(candidate.AssemblyPath).LoadFromAssemblyPath(candidate.AssemblyPath);
        var startupType = (Type)assembly.GetCustomAttributesData()
            .First(a => a.AttributeType == typeof(BrokerPluginAttribute)).ConstructorArguments[0].Value!;
        if (!typeof(IBrokerPlugin).IsAssignableFrom(startupType))
        {
            PluginLog.NotAPlugin(logger, candidate.Name, startupType.FullName ?? startupType.Name);
            return null;
        }

        return startupType;
    }

    /// <summary>
    /// The ids of configured plugin sections (<c>Plugins:&lt;Id&gt;</c> with any setting) that no loaded plugin
    /// claims. The host refuses to start with one: a <c>tls</c> block whose plugin is missing, or was skipped because
    /// it failed, must not leave the broker serving clear text.
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
}

/// <summary>The outcome of configuring the plugins.</summary>
/// <param name="Loaded">The plugins ready for the broker, in folder-name order.</param>
/// <param name="Refusals">The plugins that refused their settings; the host does not start when there is one.</param>
internal sealed record PluginConfiguration(IReadOnlyList<LoadedPlugin> Loaded, IReadOnlyList<PluginRefusal> Refusals);

/// <summary>A plugin refused its settings.</summary>
/// <param name="PluginId">The plugin.</param>
/// <param name="Message">Its message, which names the setting.</param>
/// <param name="Key">The full configuration key at fault, when the plugin named one.</param>
internal sealed record PluginRefusal(string PluginId, string Message, string? Key);
