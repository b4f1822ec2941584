using System.Collections;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Configuration;

/// <summary>
/// Builds the host's configuration from its layers, lowest precedence first: the option defaults,
/// <c>appsettings.json</c> next to the executable (optional), environment variables (<c>BROKER_</c>), flags.
/// Broker settings live in section <c>Broker</c>, plugin settings in <c>Plugins:&lt;Id&gt;</c>.
/// </summary>
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

    /// <summary>Builds the configuration.</summary>
    /// <param name="baseDirectory">Where <c>appsettings.json</c> is looked up.</param>
    /// <param name="environment">The environment variables (normally <see cref="Environment.GetEnvironmentVariables()"/>).</param>
    /// <param name="flags">Keys set by command-line flags.</param>
    /// <returns>The configuration.</returns>
    /// <exception cref="HostConfigurationException">appsettings.json cannot be read or parsed.</exception>
    public static IConfigurationRoot Build(string baseDirectory, IDictionary environment, IReadOnlyDictionary<string, string?> flags)
    {
        var path = Path.GetFullPath(Path.Combine(baseDirectory, AppSettingsFile));
        try
        {
            return new ConfigurationBuilder()
                .AddJsonFile(path, optional: true, reloadOnChange: false)
                .AddInMemoryCollection(FromEnvironment(environment))
                .AddInMemoryCollection(flags)
                .Build();
        }
        catch (Exception ex) when (ex is FormatException or InvalidDataException or IOException)
        {
            throw new HostConfigurationException($"{path}: {(ex.InnerException ?? ex).Message}", ex);
        }
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
