namespace Broker.Abstractions;

/// <summary>
/// A plugin refuses its settings. Thrown from <see cref="IBrokerPlugin.ConfigureServices"/> (directly, or by a
/// <see cref="ConfigurationValues"/> method reading a bad value), it stops the broker before anything listens: the
/// host prints the message and exits with code 1; an embedding application gets it from <c>BrokerServer.StartAsync</c>.
/// </summary>
/// <remarks>
/// Any other exception from <c>ConfigureServices</c> is taken as a fault of the plugin: the host logs it and goes on
/// without the plugin, unless settings for the plugin are configured (see docs/plugins.md). Derives from
/// <see cref="InvalidOperationException"/>, which plugins threw for bad settings before contract 1.1.
/// </remarks>
public sealed class PluginConfigurationException : InvalidOperationException
{
    /// <summary>Creates the exception with a generic message.</summary>
    public PluginConfigurationException()
        : base("The plugin's settings are not valid.")
    {
    }

    /// <summary>Creates the exception.</summary>
    /// <param name="message">What is wrong, naming the setting (the host prints it as is).</param>
    public PluginConfigurationException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with the exception that revealed the problem.</summary>
    /// <param name="message">What is wrong, naming the setting (the host prints it as is).</param>
    /// <param name="innerException">The cause.</param>
    public PluginConfigurationException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    /// <summary>
    /// The full configuration key of the bad setting (<c>Plugins:Line:port</c>), when one setting is at fault. The host
    /// then also names where the value was written when it came from a configuration file (<c>file:line:column</c>).
    /// Default <see langword="null"/>.
    /// </summary>
    public string? Key { get; init; }
}
