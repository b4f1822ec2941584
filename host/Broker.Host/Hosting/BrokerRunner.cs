using Broker.Core;
using Broker.Host.Configuration;
using Broker.Host.Logging;
using Broker.Host.Plugins;
using Broker.JetStream;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;

namespace Broker.Host.Hosting;

/// <summary>
/// One run of the broker: loads plugins, writes the pid file, starts the broker, writes the ports file, then
/// serves signals (stop, reload, reopen the log, lame duck) until the broker has stopped, and cleans up.
/// </summary>
internal sealed partial class BrokerRunner
{
    private readonly IReadOnlyDictionary<string, string?> flags;
    private readonly HostEnvironment environment;
    private readonly HostLogging logging;
    private readonly ILogger logger;
    private HostConfigurationSources sources;
    private HostSettings settings;

    /// <summary>Creates the run.</summary>
    /// <param name="flags">The flags' keys, kept to rebuild the configuration on reload.</param>
    /// <param name="environment">The process environment.</param>
    /// <param name="logging">The logging, adjusted on reload.</param>
    /// <param name="sources">The configuration the broker starts with.</param>
    /// <param name="settings">The settings bound from it.</param>
    public BrokerRunner(IReadOnlyDictionary<string, string?> flags, HostEnvironment environment, HostLogging logging, HostConfigurationSources sources, HostSettings settings)
    {
        this.flags = flags;
        this.environment = environment;
        this.logging = logging;
        this.sources = sources;
        this.settings = settings;
        logger = logging.Factory.CreateLogger("Broker.Host");
    }

    /// <summary>
    /// Loads the plugins of the configured folder and checks that every configured plugin section has its plugin.
    /// </summary>
    /// <param name="configuration">The host configuration.</param>
    /// <param name="options">The host options (plugins folder).</param>
    /// <param name="environment">The process environment (default plugins folder).</param>
    /// <param name="loggerFactory">Where the catalog logs.</param>
    /// <param name="plugins">The loaded plugins.</param>
    /// <returns><see langword="null"/>, or why the broker must not start.</returns>
    public static string? LoadPlugins(IConfiguration configuration, BrokerHostOptions options, HostEnvironment environment, ILoggerFactory loggerFactory, out IReadOnlyList<LoadedPlugin> plugins)
    {
        var path = options.PluginsPath ?? Path.Combine(environment.BaseDirectory, "plugins");
        var catalog = new PluginCatalog(configuration, loggerFactory.CreateLogger("Broker.Plugins"));
        plugins = catalog.Load(path, configured: options.PluginsPath is not null);
        var unclaimed = PluginCatalog.Unclaimed(configuration, plugins);
        return unclaimed.Count == 0
            ? null
            : $"settings for plugin(s) {string.Join(", ", unclaimed)} are configured, but no such plugin is loaded from {Path.GetFullPath(path)}";
    }

    /// <summary>Runs the broker until it stops.</summary>
    /// <returns>The exit code: 0 after a stop, 1 when the broker could not start.</returns>
    public async Task<int> RunAsync()
    {
        ReportConfiguration();
        using var signals = new HostSignals(logger);
        await using var server = new BrokerServer(settings.Broker, logging.Factory, sources.Configuration);
        if (LoadPlugins(sources.Configuration, settings.Host, environment, logging.Factory, out var plugins) is { } refusal)
        {
            HostLog.StartFailed(logger, refusal);
            return 1;
        }

        foreach (var plugin in plugins)
        {
            server.AddPlugin(plugin, plugin.Manifest);
        }

        if (settings.Host.JetStream)
        {
            server.AddPlugin(new JetStreamPlugin(new JetStreamOptions
            {
                StoreDirectory = settings.Host.StoreDir,
                MaxMemoryStore = settings.Host.JetStreamMaxMemory,
                MaxFileStore = settings.Host.JetStreamMaxFile,
                Domain = settings.Host.JetStreamDomain,
            }));
        }

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
#pragma warning disable CA1031 // A port in use, a pid file that cannot be written, a plugin's hosted service failing: one log line and exit 1, never a crash dump.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            HostLog.StartFailed(logger, ex.Message);
            HostLog.StartFailureDetails(logger, ex);
            pidFile?.Dispose();
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
            var next = signals.ReadAsync(CancellationToken.None).AsTask();
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
