using Broker.Abstractions;
using Broker.Tests.ProbePlugin;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

[assembly: BrokerPlugin(typeof(ProbePlugin), Id = "Probe")]

namespace Broker.Tests.ProbePlugin;

/// <summary>
/// Binds its section with its own copy of the configuration binder, then reports, once the broker has started, which
/// copy of the binder, of the configuration abstractions and of the contract it runs with.
/// </summary>
public sealed class ProbePlugin : IBrokerPlugin
{
    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(context);

        // The plugin's Binder working on the host's IConfiguration: the shared abstractions are one type on both sides.
        var settings = context.Configuration.Get<ProbeSettings>() ?? new ProbeSettings();
        if (settings.Fail)
        {
            // A fault of the plugin itself, not a refusal of its settings.
            throw new InvalidOperationException("the probe was told to fail");
        }

        services.AddSingleton<IHostedService>(sp => new ProbeReport(settings, sp.GetRequiredService<ILoggerFactory>().CreateLogger("Broker.Tests.Probe")));
    }
}

/// <summary>The probe's settings, bound by the plugin's own binder.</summary>
public sealed class ProbeSettings
{
    public string Greeting { get; set; } = "hello";

    /// <summary>Throw from ConfigureServices, as a plugin with a bug would.</summary>
    public bool Fail { get; set; }
}
