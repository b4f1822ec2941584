using System.Reflection;
using System.Runtime.Loader;
using Broker.Abstractions;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.Tests.ProbePlugin;

/// <summary>
/// Logs one line per assembly of interest: <c>Probe: &lt;assembly&gt; &lt;version&gt; in &lt;load context&gt; from
/// &lt;file&gt;</c>, and the greeting it was configured with.
/// </summary>
internal sealed partial class ProbeReport : IHostedService
{
    private readonly ProbeSettings settings;
    private readonly ILogger logger;

    public ProbeReport(ProbeSettings settings, ILogger logger)
    {
        this.settings = settings;
        this.logger = logger;
    }

    public Task StartAsync(CancellationToken cancellationToken)
    {
        Greeting(logger, settings.Greeting);
        foreach (var assembly in new[] { typeof(ConfigurationBinder).Assembly, typeof(IConfiguration).Assembly, typeof(IBrokerPlugin).Assembly })
        {
            var name = assembly.GetName();
            Loaded(logger, name.Name!, name.Version!.ToString(), AssemblyLoadContext.GetLoadContext(assembly)?.Name ?? "?", assembly.Location);
        }

        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    [LoggerMessage(1301, LogLevel.Information, "Probe greeting: {Greeting}")]
    private static partial void Greeting(ILogger logger, string greeting);

    [LoggerMessage(1302, LogLevel.Information, "Probe: {Assembly} {Version} in {Context} from {File}")]
    private static partial void Loaded(ILogger logger, string assembly, string version, string context, string file);
}
