using Broker.Core;
using Broker.Host.Configuration;
using Broker.Host.Hosting;
using Broker.Host.Logging;
using Broker.Host.Plugins;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;

namespace Broker.Host;

/// <summary>
/// The executable: parses flags, builds and validates the configuration, sets up logging, loads plugins, runs the
/// broker until SIGINT/SIGTERM and stops it gracefully.
/// </summary>
internal static class BrokerHost
{
    /// <summary>How the executable names itself in usage and error lines.</summary>
    public const string ExecutableName = "broker";

    /// <summary>
    /// The <c>-v</c> line. Harnesses parse the first <c>vX.Y.Z</c> to gate features, so the nats-server version whose
    /// behaviour we match comes first and our own version after it.
    /// </summary>
    public static string VersionLine => $"nats-server: v{BrokerServer.CompatibleNatsServerVersion} (broker {BrokerServer.Version})";

    /// <summary>Runs the host.</summary>
    /// <param name="args">The command line.</param>
    /// <param name="environment">Where to read settings and write output.</param>
    /// <returns>The process exit code: 0 after a graceful stop, <c>-v</c> or <c>-h</c>; 1 on bad flags or settings or a failed start.</returns>
    public static async Task<int> RunAsync(IReadOnlyList<string> args, HostEnvironment environment)
    {
        ArgumentNullException.ThrowIfNull(environment);
        var commandLine = CommandLine.Parse(args);
        if (commandLine.Error is { } error)
        {
            await environment.Error.WriteLineAsync($"{ExecutableName}: {error} (see --help)").ConfigureAwait(false);
            return 1;
        }

        switch (commandLine.Command)
        {
            case HostCommand.Version:
                await environment.Out.WriteLineAsync(VersionLine).ConfigureAwait(false);
                return 0;
            case HostCommand.Help:
                await environment.Out.WriteAsync(CommandLineFlags.Usage(ExecutableName)).ConfigureAwait(false);
                return 0;
        }

        IConfigurationRoot configuration;
        HostSettings settings;
        ILoggerFactory loggerFactory;
        try
        {
            configuration = HostConfiguration.Build(environment.BaseDirectory, environment.Variables, commandLine.Settings);
            settings = HostSettings.Bind(configuration);
            loggerFactory = HostLogging.Create(settings.Host);
        }
        catch (HostConfigurationException ex)
        {
            await environment.Error.WriteLineAsync($"{ExecutableName}: {ex.Message}").ConfigureAwait(false);
            return 1;
        }

        using (loggerFactory)
        {
            return await ServeAsync(settings, configuration, environment, loggerFactory).ConfigureAwait(false);
        }
    }

    private static async Task<int> ServeAsync(HostSettings settings, IConfiguration configuration, HostEnvironment environment, ILoggerFactory loggerFactory)
    {
        var logger = loggerFactory.CreateLogger("Broker.Host");
        using var signals = new ShutdownSignals(logger);
        await using var server = new BrokerServer(settings.Broker, loggerFactory, configuration);

        var pluginsPath = settings.Host.PluginsPath ?? Path.Combine(environment.BaseDirectory, "plugins");
        var catalog = new PluginCatalog(configuration, loggerFactory.CreateLogger("Broker.Plugins"));
        foreach (var plugin in catalog.Load(pluginsPath, configured: settings.Host.PluginsPath is not null))
        {
            server.AddPlugin(plugin, plugin.Manifest);
        }

        try
        {
            await server.StartAsync(signals.Stopping).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (signals.Stopping.IsCancellationRequested)
        {
            // Stopped by a signal while starting: StartAsync has already stopped what it had started.
            HostLog.Stopped(logger);
            return 0;
        }
#pragma warning disable CA1031 // A port in use or a plugin's hosted service failing: one log line and exit 1, never a crash dump.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            HostLog.StartFailed(logger, ex.Message);
            HostLog.StartFailureDetails(logger, ex);
            return 1;
        }

        await signals.WaitAsync().ConfigureAwait(false);
        await server.StopAsync().ConfigureAwait(false);
        HostLog.Stopped(logger);
        return 0;
    }
}
