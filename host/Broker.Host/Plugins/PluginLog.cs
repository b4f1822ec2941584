using Microsoft.Extensions.Logging;

namespace Broker.Host.Plugins;

/// <summary>Log messages of the plugin catalog (event ids 500-599, docs/logging.md). Every refusal names the plugin's folder.</summary>
internal static partial class PluginLog
{
    [LoggerMessage(500, LogLevel.Debug, "Plugin {PluginId} {PluginVersion} found in {Folder}")]
    public static partial void Found(ILogger logger, string pluginId, string pluginVersion, string folder);

    [LoggerMessage(501, LogLevel.Debug, "No plugins folder at {Path}")]
    public static partial void NoDefaultFolder(ILogger logger, string path);

    [LoggerMessage(502, LogLevel.Warning, "Plugins folder {Path} does not exist; no plugins loaded")]
    public static partial void MissingFolder(ILogger logger, string path);

    [LoggerMessage(503, LogLevel.Error, "Plugin {Plugin} skipped: {Assembly} not found")]
    public static partial void MissingAssembly(ILogger logger, string plugin, string assembly);

    [LoggerMessage(504, LogLevel.Error, "Plugin {Plugin} skipped: {Assembly} is not a .NET assembly ({Reason})")]
    public static partial void NotAnAssembly(ILogger logger, string plugin, string assembly, string reason);

    [LoggerMessage(505, LogLevel.Error, "Plugin {Plugin} skipped: it does not reference Broker.Abstractions, so it is not a broker plugin")]
    public static partial void NoContractReference(ILogger logger, string plugin);

    [LoggerMessage(506, LogLevel.Error, "Plugin {Plugin} skipped: built against contract {PluginContract}, but this broker provides contract {HostContract}")]
    public static partial void IncompatibleContract(ILogger logger, string plugin, string pluginContract, string hostContract);

    [LoggerMessage(507, LogLevel.Error, "Plugin {Plugin} skipped: its manifest requires contract {RequiredContract}, but this broker provides contract {HostContract}")]
    public static partial void ManifestNeedsNewerContract(ILogger logger, string plugin, string requiredContract, string hostContract);

    [LoggerMessage(508, LogLevel.Error, "Plugin {Plugin} skipped: its assembly has no [assembly: BrokerPlugin(...)] attribute")]
    public static partial void NoAttribute(ILogger logger, string plugin);

    [LoggerMessage(509, LogLevel.Error, "Plugin {Plugin} skipped: startup type {StartupType} does not implement IBrokerPlugin")]
    public static partial void NotAPlugin(ILogger logger, string plugin, string startupType);

    [LoggerMessage(510, LogLevel.Error, "Plugin {Plugin} skipped: id {PluginId} is already used by the plugin in {OtherFolder}")]
    public static partial void DuplicateId(ILogger logger, string plugin, string pluginId, string otherFolder);

    [LoggerMessage(511, LogLevel.Error, "Plugin {Plugin} skipped: could not be loaded: {Reason}")]
    public static partial void LoadFailed(ILogger logger, string plugin, string reason, Exception exception);

    [LoggerMessage(512, LogLevel.Error, "Plugin {Plugin} skipped: configuring its services failed: {Reason}")]
    public static partial void ConfigureFailed(ILogger logger, string plugin, string reason, Exception exception);

    [LoggerMessage(513, LogLevel.Debug, "Plugin {PluginId} {PluginVersion} configured its services")]
    public static partial void Configured(ILogger logger, string pluginId, string pluginVersion);

    [LoggerMessage(514, LogLevel.Warning, "Plugin {Plugin}: configuration key \"{Key}\" is the broker's own, so a configuration file cannot configure the plugin through it")]
    public static partial void BrokerKeyNotClaimed(ILogger logger, string plugin, string key);

    [LoggerMessage(515, LogLevel.Error, "Plugin {Plugin} skipped: it reads configuration block \"{Key}\", but {Conflict}")]
    public static partial void BlockTaken(ILogger logger, string plugin, string key, string conflict);

    [LoggerMessage(516, LogLevel.Error, "Plugin {Plugin} skipped: \"{Key}\" in ConfigurationAliases or ConfigurationKeys is not a configuration key")]
    public static partial void BadConfigurationKey(ILogger logger, string plugin, string key);

    [LoggerMessage(517, LogLevel.Debug, "Plugin {PluginId} not loaded: the configuration sets none of {Keys}")]
    public static partial void NotUsed(ILogger logger, string pluginId, string keys);

    [LoggerMessage(518, LogLevel.Error, "Plugin {Plugin} skipped: \"{Key}\" in ActivationKeys is not a configuration path")]
    public static partial void BadActivationKey(ILogger logger, string plugin, string key);
}
