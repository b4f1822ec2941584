using Microsoft.Extensions.Configuration;

namespace Broker.Abstractions;

/// <summary>What the broker tells a plugin when it configures its services.</summary>
public sealed class PluginContext
{
    /// <summary>Creates a context.</summary>
    /// <param name="manifest">The plugin's manifest.</param>
    /// <param name="configuration">The plugin's configuration section (<c>Plugins:&lt;Id&gt;</c>).</param>
    public PluginContext(PluginManifest manifest, IConfiguration configuration)
    {
        Manifest = manifest;
        Configuration = configuration;
    }

    /// <summary>The plugin's manifest.</summary>
    public PluginManifest Manifest { get; }

    /// <summary>The plugin's configuration section, <c>Plugins:&lt;Id&gt;</c>; empty when none is configured.</summary>
    public IConfiguration Configuration { get; }
}
