using System.Net.Sockets;
using Broker.Core;
using Broker.Host.Configuration;
using Broker.Host.Logging;
using Broker.Host.Plugins;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.Host.Hosting;

/// <summary>
/// One run of the broker: loads plugins, writes the pid file, starts the broker, writes the ports file, then
/// serves signals (stop, reload, reopen the log, lame duck) until the broker has stopped, and cleans up.
/// </summary>
internal sealed partial class BrokerRunner
{
    /// <summary>The log category of the plugin catalog.</summary>
    public const string PluginsCategory = "Broker.Plugins";

    private readonly IReadOnlyDictionary<string, string?> flags;
    private readonly HostEnvironment environment;
    private readonly HostLogging logging;
    private readonly ILogger logger;
    private readonly PluginDiscovery plugins;
    private readonly Task<string?> warmUp;
    private HostConfigurationSources sources;
    private HostSettings settings;

    /// <summary>Creates the run.</summary>
    /// <param name="flags">The flags' keys, kept to rebuild the configuration on reload.</param>
    /// <param name="environment">The process environment.</param>
    /// <param name="logging">The logging, adjusted on reload.</param>
    /// <param name="sources">The configuration the broker starts with.</param>
    /// <param name="settings">The settings bound from it.</param>
    /// <param name="plugins">The plugins found in the plugins folder, not configured yet.</param>
    /// <param name="warmUp">The start-up warm-up (<see cref="StartupWarmUp.RunAsync"/>), already running; the broker's last hosted service waits for it.</param>
    public BrokerRunner(IReadOnlyDictionary<string, string?> flags, HostEnvironment environment, HostLogging logging, HostConfigurationSources sources, HostSettings settings, PluginDiscovery plugins, Task<string?> warmUp)
    {
        this.warmUp = warmUp;
        this.flags = flags;
        this.environment = environment;
        this.logging = logging;
        this.sources = sources;
        this.settings = settings;
        this.plugins = plugins;
        logger = logging.Factory.CreateLogger("Broker.Host");
    }

    /// <summary>
    /// Lets each plugin found configure its services with its section, and checks that every configured plugin
    /// section has its plugin.
    /// </summary>
    /// <param name="plugins">The plugins found.</param>
    /// <param name="sources">The host configuration.</param>
    /// <param name="loggerFactory">Where the catalog logs.</param>
    /// <param name="loaded">The loaded plugins.</param>
    /// <returns>
    /// <see langword="null"/>, or why the broker must not start: a plugin refused its settings (its message, after the
    /// <c>file:line:column</c> of the value when the configuration file gave it), or settings are configured for a
    /// plugin that is not loaded.
    /// </returns>
    public static string? ConfigurePlugins(PluginDiscovery plugins, HostConfigurationSources sources, ILoggerFactory loggerFactory, out IReadOnlyList<LoadedPlugin> loaded)
    {
        var catalog = new PluginCatalog(loggerFactory.CreateLogger(PluginsCategory));
        var result = catalog.Configure(plugins, sources.Configuration);
        loaded = result.Loaded;
        if (result.Refusals.Count > 0)
        {
            return string.Join(Environment.NewLine, result.Refusals.Select(r => Describe(r, sources)));
        }

        var unclaimed = PluginCatalog.Unclaimed(sources.Configuration, loaded);
        return unclaimed.Count == 0
            ? null
            : $"settings for plugin(s) {string.Join(", ", unclaimed)} are configured, but no such plugin is loaded from {plugins.Folder}";
    }

    // The plugin's message, after "plugin <Id>: " unless it already names the plugin's section (the shared reader's
    // messages do), and after where the configuration file wrote the setting: "line.conf:3:3: Plugins:Line:port: ...".
    // A value of the file that the environment or a flag overrode is not pointed at.
    private static string Describe(PluginRefusal refusal, HostConfigurationSources sources)
    {
        var section = HostConfiguration.PluginsSection + ":" + refusal.PluginId;
        var text = refusal.Message.StartsWith(section, StringComparison.OrdinalIgnoreCase) ? refusal.Message : $"plugin {refusal.PluginId}: {refusal.Message}";
        if (refusal.Key is not { } key || sources.ConfigFile is not { } file || !file.Positions.TryGetValue(key, out var position))
        {
            return text;
        }

        var overridden = file.Settings.TryGetValue(key, out var value) && value != sources.Configuration[key];
        return overridden ? text : $"{position}: {text}";
    }

    /// <summary>Runs the broker until it stops.</summary>
    /// <returns>The exit code: 0 after a stop, 1 when the broker could not start.</returns>
    public async Task<int> RunAsync()
    {
        ReportConfiguration();

        // The warm-up's private server has run on another core since the configuration was read; the broker's last
        // hosted service waits for it, so it ends before the listeners accept (StartupWarmUpGate).
        using var signals = new HostSignals(logger);
        await using var server = new BrokerServer(settings.Broker, logging.Factory, sources.Configuration);
        if (ConfigurePlugins(plugins, sources, logging.Factory, out var loaded) is { } refusal)
        {
            await warmUp.ConfigureAwait(false);
            HostLog.StartFailed(logger, refusal);
            return 1;
        }

        foreach (var plugin in loaded)
        {
            server.AddPlugin(plugin, plugin.Manifest);
        }

        // Registered after the plugins' services, so it starts after theirs (JetStream's restore runs beside the warm-up).
        server.ConfigureServices(services => services.AddSingleton<IHostedService>(new StartupWarmUpGate(warmUp, logger)));

        PidFile? pidFile = null;
        PortsFile? portsFile = null;
        try
        {
            if (settings.Host.PidFile is { Length: > 0 } pidPath)
            {
                pidFile = PidFile.Write(pidPath);
            }

            await server.StartAsync().ConfigureAwait(false);
            portsFile = WritePortsFile(server);
        }
        catch (SocketException ex)
        {
            // The broker logged nats-server's line for the listener it could not bind; that is the one line.
            HostLog.StartFailureDetails(logger, ex);
            pidFile?.Dispose();
            await warmUp.ConfigureAwait(false);
            return 1;
        }
#pragma warning disable CA1031 // A pid file that cannot be written, a plugin's hosted service failing: one log line and exit 1, never a crash dump.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            HostLog.StartFailed(logger, ex.Message);
            HostLog.StartFailureDetails(logger, ex);
            pidFile?.Dispose();
            await warmUp.ConfigureAwait(false);
            return 1;
        }

        try
        {
            await ServeSignalsAsync(server, signals).ConfigureAwait(false);
        }
        finally
        {
            portsFile?.Dispose();
            pidFile?.Dispose();
        }

        HostLog.Stopped(logger);
        return 0;
    }

    // Until the broker has stopped: by a stop signal, or at the end of lame duck mode.
    private async Task ServeSignalsAsync(BrokerServer server, HostSignals signals)
    {
        var stopped = server.Stopped;
        while (true)
        {
            var next = signals.ReadAsync();
            if (await Task.WhenAny(next, stopped).ConfigureAwait(false) == stopped)
            {
                return;
            }

            switch (await next.ConfigureAwait(false))
            {
                case HostSignal.Stop:
                    await server.StopAsync().ConfigureAwait(false);
                    return;
                case HostSignal.Reload:
                    await ReloadAsync(server).ConfigureAwait(false);
                    break;
                case HostSignal.Reopen:
                    ReopenLog();
                    break;
                case HostSignal.LameDuck:
                    // It ends by stopping the broker, which completes `stopped`; signals are still served meanwhile.
                    _ = server.EnterLameDuckModeAsync();
                    break;
            }
        }
    }

    private PortsFile? WritePortsFile(BrokerServer server)
    {
        if (settings.Host.PortsFileDir is not { Length: > 0 } directory)
        {
            return null;
        }

        var path = PortsFile.PathFor(directory, settings.Host.ExecutableName ?? ProcessName.Detect());
        try
        {
            var file = PortsFile.Write(path, server, sources.Configuration);
            HostLog.PortsFileWritten(logger, path);
            return file;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // As nats-server: logged, and the broker keeps running.
            HostLog.PortsFileFailed(logger, path, ex.Message);
            return null;
        }
    }

    private void ReopenLog()
    {
        try
        {
            logging.Reopen();
            HostLog.LogReopened(logger);
        }
        catch (HostConfigurationException ex)
        {
            HostLog.LogReopenFailed(logger, ex.Message);
        }
    }

    private void ReportConfiguration()
    {
        if (sources.ConfigFile is { } file)
        {
            HostLog.UsingConfigFile(logger, file.File);
            foreach (var notice in file.Diagnostics)
            {
                HostLog.ConfigNotice(logger, notice.ToString());
            }
        }
    }
}
