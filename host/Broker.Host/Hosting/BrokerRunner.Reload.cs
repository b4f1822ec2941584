using Broker.Core;
using Broker.Host.Configuration;
using Broker.Host.Configuration.ConfigFile;
using Broker.Host.Logging;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Hosting;

// SIGHUP / --signal reload: every layer is read again (appsettings.json, the configuration file, the environment the
// process started with, the same flags); the result replaces the running configuration as a whole or not at all.
internal sealed partial class BrokerRunner
{
    private async Task ReloadAsync(BrokerServer server)
    {
        HostConfigurationSources next;
        HostSettings nextSettings;
        try
        {
            // The plugins stay those found at start (changing the plugins folder needs a restart).
            next = HostConfiguration.Build(environment.BaseDirectory, environment.Variables, flags, _ => plugins.Blocks);
            nextSettings = HostSettings.Bind(next.Configuration);
            HostLogging.Validate(nextSettings.Host);
        }
        catch (HostConfigurationException ex)
        {
            HostLog.ReloadFailed(logger, ex.Message);
            return;
        }

        var restartOnly = RestartOnly(settings.Host, nextSettings.Host, sources.Configuration, next.Configuration, plugins.Blocks);
        if (restartOnly.Count > 0)
        {
            HostLog.ReloadFailed(logger, "config reload not supported for " + string.Join(", ", restartOnly) + "; restart the server to change them");
            return;
        }

        // The log level goes first, so connections see a changed trace level (-V) when the broker reloads; it goes
        // back if the broker refuses the new configuration.
        var loggingApplied = true;
        try
        {
            logging.Apply(nextSettings.Host);
        }
        catch (HostConfigurationException ex)
        {
            // Checked above; the file became unwritable since. The broker's part still applies, the old log stays.
            HostLog.ReloadFailed(logger, ex.Message);
            loggingApplied = false;
        }

        ReloadResult result;
        try
        {
            result = await server.ReloadAsync(nextSettings.Broker).ConfigureAwait(false);
        }
        catch (InvalidOperationException ex)
        {
            // Stopping, or at the end of lame duck mode: nothing left to reload.
            RestoreLogging(loggingApplied);
            HostLog.ReloadFailed(logger, ex.Message);
            return;
        }

        if (!result.Succeeded)
        {
            RestoreLogging(loggingApplied);
            HostLog.ReloadFailed(logger, result.Error ?? "refused");
            return;
        }

        foreach (var change in HostChanges(settings.Host, nextSettings.Host))
        {
            HostLog.ReloadedSetting(logger, change);
        }

        sources = next;
        settings = nextSettings;
        HostLog.Reloaded(logger);
    }

    private void RestoreLogging(bool applied)
    {
        if (!applied)
        {
            return;
        }

        try
        {
            logging.Apply(settings.Host);
        }
        catch (HostConfigurationException ex)
        {
            HostLog.ReloadFailed(logger, ex.Message);
        }
    }

    // The host's own settings that changed, as nats-server logs them after "Reloaded: " (reload.go's options).
    private static List<string> HostChanges(BrokerHostOptions current, BrokerHostOptions next)
    {
        var changes = new List<string>();
        if (current.Trace != next.Trace)
        {
            changes.Add("trace = " + Bool(next.Trace));
        }

        if (current.Debug != next.Debug)
        {
            changes.Add("debug = " + Bool(next.Debug));
        }

        if (current.LogTime != next.LogTime)
        {
            changes.Add("logtime = " + Bool(next.LogTime));
        }

        if (current.LogFile != next.LogFile)
        {
            changes.Add("log_file = " + next.LogFile);
        }

        return changes;

        static string Bool(bool value) => value ? "true" : "false";
    }

    // The host's settings that only take effect at start, by their nats-server names. Plugins read their sections
    // once, when the broker starts, so a changed plugin section (tls, websocket, a plugin's block) needs a restart too.
    private static List<string> RestartOnly(BrokerHostOptions current, BrokerHostOptions next, IConfiguration currentConfiguration, IConfiguration nextConfiguration, PluginBlocks blocks)
    {
        var changed = new List<string>();
        if (current.PluginsPath != next.PluginsPath)
        {
            changed.Add("plugins");
        }

        if (current.PidFile != next.PidFile)
        {
            changed.Add("pid_file");
        }

        if (current.PortsFileDir != next.PortsFileDir || current.ExecutableName != next.ExecutableName)
        {
            changed.Add("ports_file_dir");
        }

        var currentPlugins = currentConfiguration.GetSection(HostConfiguration.PluginsSection);
        var nextPlugins = nextConfiguration.GetSection(HostConfiguration.PluginsSection);
        var ids = currentPlugins.GetChildren().Concat(nextPlugins.GetChildren()).Select(s => s.Key).Distinct(StringComparer.OrdinalIgnoreCase);
        foreach (var id in ids)
        {
            if (!SameSection(currentPlugins.GetSection(id), nextPlugins.GetSection(id)))
            {
                changed.Add(blocks.NameOf(id));
            }
        }

        return changed;
    }

    private static bool SameSection(IConfiguration a, IConfiguration b)
    {
        static SortedDictionary<string, string?> Flatten(IConfiguration section) =>
            new(section.AsEnumerable(makePathsRelative: true).ToDictionary(kv => kv.Key.ToUpperInvariant(), kv => kv.Value), StringComparer.Ordinal);

        return Flatten(a).SequenceEqual(Flatten(b));
    }
}
