namespace Broker.Abstractions;

/// <summary>A plugin's identity and the contract version it needs.</summary>
/// <param name="Id">The plugin id (folder name and configuration section name).</param>
/// <param name="Version">The plugin's own version.</param>
/// <param name="MinimumContractVersion">The lowest <see cref="BrokerContract.Version"/> the plugin runs against.</param>
public sealed record PluginManifest(string Id, Version Version, Version MinimumContractVersion);
