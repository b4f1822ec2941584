using Broker.Host.Plugins;
using Broker.TestKit;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;

namespace Broker.Host.Tests.Plugins;

/// <summary>
/// <c>BrokerPluginAttribute.ActivationKeys</c>, read from metadata by the catalog over the plugins this project places
/// as the host does (the sample line plugin, JetStream, the memory store, TLS): a plugin that declares keys (an empty
/// list included: JetStream) is loaded only when its section or one of its keys is configured, one that declares none
/// always.
/// </summary>
public sealed class PluginActivationTests
{
    private static readonly string Folder = Path.Combine(AppContext.BaseDirectory, "plugins");

    private readonly TestLogSink logs = new();

    [Fact]
    public void Discovery_reads_the_activation_keys_from_metadata()
    {
        var found = new PluginCatalog(logs.CreateLogger("Broker.Plugins")).Discover(Folder, configured: true);

        var byId = found.Candidates.ToDictionary(c => c.Manifest.Id);
        Assert.Null(byId[SamplePlugin.Id].ActivationKeys);
        Assert.Equal([], byId["JetStream"].ActivationKeys);
        Assert.Equal(["Plugins:JetStream"], byId["MemStore"].ActivationKeys);
        Assert.Equal(["Plugins:*:tls", "Broker:Monitoring:Middleware"], byId["Tls"].ActivationKeys);
        Assert.Empty(logs.Errors);
    }

    [Fact]
    public void Without_their_settings_jetstream_the_store_and_tls_are_not_loaded_and_a_plugin_without_keys_is()
    {
        var loaded = UsedIds([]);

        Assert.Contains(SamplePlugin.Id, loaded);
        Assert.DoesNotContain("JetStream", loaded);
        Assert.DoesNotContain("MemStore", loaded);
        Assert.DoesNotContain("Tls", loaded);
        Assert.Contains(logs.Entries, e => e.Level == LogLevel.Debug && e.Message.StartsWith("Plugin MemStore not loaded", StringComparison.Ordinal));
    }

    [Fact]
    public void An_activation_key_loads_the_plugin()
    {
        // JetStream's section (here its top-level store_dir) brings JetStream's plugin and the store; JetStream itself
        // stays off without an enabling setting, as nats-server.
        var withSection = UsedIds(new() { ["Plugins:JetStream:store_dir"] = Path.GetTempPath() });
        Assert.Contains("MemStore", withSection);
        Assert.Contains("JetStream", withSection);

        // Any plugin's nested tls block brings TLS ("Plugins:*:tls"), and so does its own section.
        Assert.Contains("Tls", UsedIds(new() { ["Plugins:WebSocket:tls:cert_file"] = "server.pem" }));
        Assert.Contains("Tls", UsedIds(new() { ["Plugins:Tls:allow_non_tls"] = "true" }));
        Assert.DoesNotContain("Tls", UsedIds(new() { ["Plugins:WebSocket:no_tls"] = "true" }));
    }

    [Fact]
    public void An_empty_block_is_configured()
    {
        // "memstore {}" in a configuration file sets the section to an empty value.
        Assert.Contains("MemStore", UsedIds(new() { ["Plugins:MemStore"] = "" }));
    }

    // The plugins whose code ran: loaded, or refusing their settings (TLS without a certificate).
    private List<string> UsedIds(Dictionary<string, string?> settings)
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(settings).Build();
        var catalog = new PluginCatalog(logs.CreateLogger("Broker.Plugins"));
        var result = catalog.Configure(catalog.Discover(Folder, configured: true), configuration);
        Assert.Empty(logs.Errors);
        return [.. result.Loaded.Select(p => p.Manifest.Id), .. result.Refusals.Select(r => r.PluginId)];
    }
}
