using System.Collections;
using Broker.Host.Configuration.ConfigFile;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Configuration;

/// <summary>
/// Builds the host's configuration from its layers, lowest precedence first: the option defaults,
/// <c>appsettings.json</c> next to the executable (optional), the nats-server configuration file (<c>-c</c>),
/// environment variables (<c>BROKER_</c>), flags. Broker settings live in section <c>Broker</c>, plugin settings in
/// <c>Plugins:&lt;Id&gt;</c>.
/// </summary>
/// <remarks>
/// The file sits below the environment and the flags: it is the deployment's configuration, which a container's
/// environment or an operator's flag overrides for one run (nats-server too lets flags override the file).
/// appsettings.json, shipped next to the executable, is the product's default configuration below both.
/// </remarks>
internal static class HostConfiguration
{
    /// <summary>The section bound to <see cref="Core.BrokerOptions"/> and <see cref="BrokerHostOptions"/>.</summary>
    public const string BrokerSection = "Broker";

    /// <summary>The section whose children are handed to plugins (<c>Plugins:&lt;Id&gt;</c>).</summary>
    public const string PluginsSection = "Plugins";

    /// <summary>The prefix of environment variables read as configuration.</summary>
    public const string EnvironmentPrefix = "BROKER_";

    /// <summary>The optional JSON settings file, looked up next to the executable.</summary>
    public const string AppSettingsFile = "appsettings.json";

    /// <summary>The key naming the configuration file (<c>-c</c>, <c>BROKER_CONFIGFILE</c>).</summary>
    public const string ConfigFileKey = BrokerSection + ":" + nameof(BrokerHostOptions.ConfigFile);

    /// <summary>Builds the configuration, reading the configuration file when one is named.</summary>
    /// <param name="baseDirectory">Where <c>appsettings.json</c> is looked up.</param>
    /// <param name="environment">The environment variables (normally <see cref="Environment.GetEnvironmentVariables()"/>).</param>
    /// <param name="flags">Keys set by command-line flags.</param>
    /// <param name="plugins">
    /// Called once with the layers other than the configuration file (they name the plugins folder; the file cannot):
    /// finds the plugins and returns the blocks and keys of the configuration file they read (<see cref="PluginBlocks"/>).
    /// </param>
    /// <returns>The configuration, and the mapped configuration file when there is one.</returns>
    /// <exception cref="HostConfigurationException">
    /// appsettings.json cannot be read or parsed, or the configuration file has errors (the message lists them all,
    /// one per line, as <c>file:line:column: reason</c>).
    /// </exception>
    public static HostConfigurationSources Build(string baseDirectory, IDictionary environment, IReadOnlyDictionary<string, string?> flags, Func<IConfiguration, PluginBlocks> plugins)
    {
        ArgumentNullException.ThrowIfNull(plugins);
        ArgumentNullException.ThrowIfNull(environment);
        var path = Path.GetFullPath(Path.Combine(baseDirectory, AppSettingsFile));
        var variables = new List<KeyValuePair<string, string?>>(FromEnvironment(environment));
        try
        {
            // The file may be named by any layer above it (normally the -c flag); the plugins folder, whose plugins decide
            // which of the file's blocks are theirs, too.
            var others = Layers(path, null, variables, flags);
            var blocks = plugins(others);
            var named = others[ConfigFileKey];
            ConfMapping? file = null;
            if (!string.IsNullOrEmpty(named))
            {
                file = ConfMapper.MapFile(named, blocks, name => environment[name] as string);
                if (file.HasErrors)
                {
                    throw new HostConfigurationException(string.Join(Environment.NewLine, file.Diagnostics));
                }
            }

            return new HostConfigurationSources(Layers(path, file, variables, flags), file);
        }
        catch (Exception ex) when (ex is FormatException or InvalidDataException or IOException)
        {
            throw new HostConfigurationException($"{path}: {(ex.InnerException ?? ex).Message}", ex);
        }
    }

    // TLS flags replace the TLS settings of the file and the environment, as nats-server's overrideTLS replaces the
    // file's TLS config (TlsFlags); --routes replaces the file's routes (ClusterFlags).
    private static IConfigurationRoot Layers(string appSettings, ConfMapping? file, IEnumerable<KeyValuePair<string, string?>> variables, IReadOnlyDictionary<string, string?> flags)
    {
        var tls = flags.GetValueOrDefault(TlsFlags.ModeKey);
        return new ConfigurationBuilder()
            .AddJsonFile(appSettings, optional: true, reloadOnChange: false)
            .AddInMemoryCollection(NotReplaced(file?.Settings ?? new Dictionary<string, string?>(), tls, flags))
            .AddInMemoryCollection(NotReplaced(variables, tls, flags))
            .AddInMemoryCollection(flags)
            .Build();
    }

    // The settings the flags do not replace. A loop rather than LINQ's Where: its instantiations over KeyValuePair are
    // in no ReadyToRun image, and the JIT compiled about fifteen methods for them at every start.
    private static List<KeyValuePair<string, string?>> NotReplaced(IEnumerable<KeyValuePair<string, string?>> settings, string? tls, IReadOnlyDictionary<string, string?> flags)
    {
        var kept = new List<KeyValuePair<string, string?>>();
        foreach (var setting in settings)
        {
            if (!TlsFlags.Replaces(tls, setting.Key) && !ClusterFlags.Replaces(flags, setting.Key))
            {
                kept.Add(setting);
            }
        }

        return kept;
    }

    /// <summary>
    /// Maps <c>BROKER_</c> variables onto configuration keys: the prefix is removed, <c>__</c> separates sections,
    /// <c>BROKER_PLUGINS__&lt;Id&gt;__...</c> goes to <c>Plugins:&lt;Id&gt;:...</c> and everything else into the
    /// <c>Broker</c> section (<c>BROKER_PORT</c> → <c>Broker:Port</c>,
    /// <c>BROKER_AUTHORIZATION__USERS__0__USER</c> → <c>Broker:Authorization:Users:0:User</c>).
    /// </summary>
    /// <param name="environment">The environment variables.</param>
    /// <returns>The configuration keys and values.</returns>
    public static IEnumerable<KeyValuePair<string, string?>> FromEnvironment(IDictionary environment)
    {
        ArgumentNullException.ThrowIfNull(environment);
        const string pluginsPrefix = PluginsSection + ":";
        foreach (DictionaryEntry entry in environment)
        {
            if (entry.Key is not string name || !name.StartsWith(EnvironmentPrefix, StringComparison.OrdinalIgnoreCase) || name.Length == EnvironmentPrefix.Length)
            {
                continue;
            }

            var key = name[EnvironmentPrefix.Length..].Replace("__", ":", StringComparison.Ordinal);
            var value = entry.Value as string;
            yield return key.StartsWith(pluginsPrefix, StringComparison.OrdinalIgnoreCase)
                ? new(pluginsPrefix + key[pluginsPrefix.Length..], value)
                : new(BrokerSection + ":" + key, value);
        }
    }
}

/// <summary>The built configuration and the configuration file it includes.</summary>
/// <param name="Configuration">Every layer.</param>
/// <param name="ConfigFile">The mapped configuration file (with its warnings), or <see langword="null"/> when none is named.</param>
internal sealed record HostConfigurationSources(IConfigurationRoot Configuration, ConfMapping? ConfigFile);
