using Broker.Core;
using Broker.Host.Configuration;
using Broker.Host.Hosting;
using Broker.Host.Logging;
using Broker.Host.Plugins;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Host;

/// <summary>
/// The executable: parses flags, runs a command (<c>-v</c>, <c>-h</c>, <c>-t</c>, <c>--signal</c>) or builds and
/// validates the configuration, sets up logging and runs the broker (<see cref="BrokerRunner"/>) until it stops.
/// </summary>
internal static class BrokerHost
{
    /// <summary>
    /// The <c>-v</c> line. Harnesses parse the first <c>vX.Y.Z</c> to gate features, so the nats-server version whose
    /// behaviour we match comes first and our own version after it.
    /// </summary>
    public static string VersionLine => $"nats-server: v{BrokerServer.CompatibleNatsServerVersion} (broker {BrokerServer.Version})";

    /// <summary>Runs the host.</summary>
    /// <param name="args">The command line.</param>
    /// <param name="environment">Where to read settings and write output.</param>
    /// <returns>
    /// The process exit code: 0 after a graceful stop, <c>-v</c>, <c>-h</c>, a valid <c>-t</c> or a sent signal; 1 on
    /// bad flags or settings, a failed start, or a signal that could not be sent.
    /// </returns>
    public static async Task<int> RunAsync(IReadOnlyList<string> args, HostEnvironment environment)
    {
        ArgumentNullException.ThrowIfNull(environment);
        var commandLine = CommandLine.Parse(args);
        if (commandLine.Error is { } error)
        {
            return await FailAsync(environment, $"{error} (see --help)").ConfigureAwait(false);
        }

        switch (commandLine.Command)
        {
            case HostCommand.Version:
                await environment.Out.WriteLineAsync(VersionLine).ConfigureAwait(false);
                return 0;
            case HostCommand.Help:
                await environment.Out.WriteAsync(CommandLineFlags.Usage(environment.ProgramName)).ConfigureAwait(false);
                return 0;
            case HostCommand.Signal:
                return await SignalAsync(commandLine, environment).ConfigureAwait(false);
        }

        // The warm-up's private server starts now, on the other core, while this thread reads the configuration, finds
        // the plugins, sets up logging and builds the broker (about 100 ms of a start): begun later, the start waited
        // for it (docs/benchmarks.md, "restart4"). It also pays first the one-time costs (the NKeys, the metrics
        // instruments, the server's types) that the real server's construction then finds done.
        var warmUp = commandLine.Command == HostCommand.Run ? Task.Run(StartupWarmUp.RunAsync) : Task.FromResult<string?>(null);

        // What the plugin catalog finds is logged once logging is set up, which the configuration decides.
        var pluginLog = new BufferedLogger();
        HostConfigurationSources sources;
        HostSettings settings;
        PluginDiscovery plugins;
        try
        {
            (sources, plugins) = Configure(commandLine.Settings, environment, pluginLog);
            settings = HostSettings.Bind(sources.Configuration);
        }
        catch (HostConfigurationException ex)
        {
            // A plugin that was refused may be why its block is an unknown field: say so first.
            if (pluginLog.HasErrors)
            {
                using var defaults = HostLogging.Create(new BrokerHostOptions());
                pluginLog.ReplayTo(defaults.Factory.CreateLogger(BrokerRunner.PluginsCategory));
            }

            // A start that fails lets the warm-up end first (a few hundred milliseconds at most), so no private
            // server outlives the call.
            await warmUp.ConfigureAwait(false);
            return await FailAsync(environment, ex.Message).ConfigureAwait(false);
        }

        if (commandLine.Command == HostCommand.CheckConfig)
        {
            return await CheckConfigAsync(sources, settings, plugins, pluginLog, environment).ConfigureAwait(false);
        }

        HostLogging logging;
        try
        {
            logging = HostLogging.Create(settings.Host);
        }
        catch (HostConfigurationException ex)
        {
            await warmUp.ConfigureAwait(false);
            return await FailAsync(environment, ex.Message).ConfigureAwait(false);
        }

        using (logging)
        {
            pluginLog.ReplayTo(logging.Factory.CreateLogger(BrokerRunner.PluginsCategory));
            var runner = new BrokerRunner(commandLine.Settings, environment, logging, sources, settings, plugins, warmUp);
            return await runner.RunAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Finds the plugins of the plugins folder the configuration names, then builds the configuration with the
    /// configuration-file blocks those plugins read.
    /// </summary>
    /// <param name="flags">The flags' keys.</param>
    /// <param name="environment">The process environment.</param>
    /// <param name="pluginLog">Where the catalog logs what it refuses.</param>
    /// <returns>The configuration and the plugins found.</returns>
    /// <exception cref="HostConfigurationException">A layer cannot be read or the configuration file has errors.</exception>
    internal static (HostConfigurationSources Sources, PluginDiscovery Plugins) Configure(IReadOnlyDictionary<string, string?> flags, HostEnvironment environment, ILogger pluginLog)
    {
        var plugins = PluginDiscovery.None;
        var sources = HostConfiguration.Build(environment.BaseDirectory, environment.Variables, flags, layers =>
        {
            var (path, configured) = PluginCatalog.FolderOf(layers, environment.BaseDirectory);
            plugins = new PluginCatalog(pluginLog).Discover(path, configured);
            return plugins.Blocks;
        });
        return (sources, plugins);
    }

    // -t: the file parses and maps without errors or nats-server's warnings, the settings validate, and every plugin
    // section is claimed by a plugin that accepted it. Listeners are not bound.
    private static async Task<int> CheckConfigAsync(HostConfigurationSources sources, HostSettings settings, PluginDiscovery plugins, BufferedLogger pluginLog, HostEnvironment environment)
    {
        if (sources.ConfigFile is not { } file)
        {
            return await FailAsync(environment, "must specify [-c, --config] option to check configuration file syntax").ConfigureAwait(false);
        }

        if (file.FailsCheck)
        {
            return await FailAsync(environment, string.Join(Environment.NewLine, file.Diagnostics)).ConfigureAwait(false);
        }

        foreach (var notice in file.Diagnostics)
        {
            await environment.Error.WriteLineAsync(notice.ToString()).ConfigureAwait(false);
        }

        // Plugin failures are logged to standard error whatever the configured log file.
        settings.Host.LogFile = null;
        using (var logging = HostLogging.Create(settings.Host))
        {
            pluginLog.ReplayTo(logging.Factory.CreateLogger(BrokerRunner.PluginsCategory));
            if (BrokerRunner.ConfigurePlugins(plugins, sources, logging.Factory, out _) is { } refusal)
            {
                return await FailAsync(environment, refusal).ConfigureAwait(false);
            }
        }

        await environment.Error.WriteLineAsync($"{environment.ProgramName}: configuration file {file.File} is valid").ConfigureAwait(false);
        return 0;
    }

    // -sl: the pid comes with the value or from the configured pid file.
    private static async Task<int> SignalAsync(CommandLine commandLine, HostEnvironment environment)
    {
        var value = commandLine.Settings[CommandLineFlags.SignalKey] ?? "";
        string? pidFile = null;
        if (!value.Contains('=', StringComparison.Ordinal))
        {
            try
            {
                var (sources, _) = Configure(commandLine.Settings, environment, NullLogger.Instance);
                pidFile = HostSettings.Bind(sources.Configuration).Host.PidFile;
            }
            catch (HostConfigurationException ex)
            {
                return await FailAsync(environment, ex.Message).ConfigureAwait(false);
            }
        }

        return SignalCommand.Send(value, pidFile) is { } failure ? await FailAsync(environment, failure).ConfigureAwait(false) : 0;
    }

    private static async Task<int> FailAsync(HostEnvironment environment, string message)
    {
        await environment.Error.WriteLineAsync($"{environment.ProgramName}: {message}").ConfigureAwait(false);
        return 1;
    }
}
