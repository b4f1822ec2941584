using Broker.Host.Configuration.Conf;
using Broker.Host.Configuration.ConfigFile;
using Broker.Host.Configuration.ConfigFile.Internal;
using static Broker.Host.Tests.ConfigFile.Internal.MapperTestKit;

namespace Broker.Host.Tests.ConfigFile.Internal;

public sealed class PluginBlockMapperTests
{
    private readonly ConfMappingBuilder output = new();
    private readonly PluginBlockMapper mapper;

    private readonly PluginBlocks plugins = new();

    public PluginBlockMapperTests() => mapper = new PluginBlockMapper(new ConfValueReader(output), output, plugins);

    [Fact]
    public void A_block_is_flattened_into_the_plugins_section_with_positions()
    {
        mapper.Map(Entry("tls {\n  cert: a.pem\n  list: [1, { x: true }]\n  empty: {}\n}"), new PluginBlock("tls", "Tls", Whole: true));

        var mapping = Built(output);
        Assert.Equal(
            ["Plugins:Tls=", "Plugins:Tls:cert=a.pem", "Plugins:Tls:empty=", "Plugins:Tls:list:0=1", "Plugins:Tls:list:1:x=true"],
            Settings(mapping));
        Assert.Equal(new ConfPosition("test.conf", 2, 3), mapping.Positions["Plugins:Tls:cert"]);
        Assert.Equal(new ConfPosition("test.conf", 3, 10), mapping.Positions["Plugins:Tls:list:0"]);
        Assert.Equal(new ConfPosition("test.conf", 3, 15), mapping.Positions["Plugins:Tls:list:1:x"]);
        Assert.Equal(new ConfPosition("test.conf", 1, 1), mapping.Positions["Plugins:Tls"]);
        Assert.Empty(mapping.Diagnostics);
    }

    [Fact]
    public void The_file_store_settings_of_the_jetstream_block_go_to_the_file_store_under_its_names()
    {
        plugins.Add("filestore", "FileStore", whole: true);

        mapper.Map(Entry("jetstream {\n  store_dir: /d\n  sync: \"2m\"\n  ek: k\n  cipher: aes\n}"), new PluginBlock("jetstream", "JetStream", Whole: true));

        var mapping = Built(output);
        Assert.Equal(
            ["Plugins:FileStore:cipher=aes", "Plugins:FileStore:key=k", "Plugins:FileStore:sync_interval=2m", "Plugins:JetStream=", "Plugins:JetStream:store_dir=/d"],
            Settings(mapping));
        Assert.Equal(new ConfPosition("test.conf", 4, 3), mapping.Positions["Plugins:FileStore:key"]);
        Assert.Empty(mapping.Diagnostics);
    }

    [Fact]
    public void The_js_alias_hands_them_over_too()
    {
        plugins.Add("filestore", "FileStore", whole: true);

        mapper.Map(Entry("js {\n  sync_interval: always\n}"), new PluginBlock("js", "JetStream", Whole: true));

        Assert.Equal(["Plugins:FileStore:sync_interval=always", "Plugins:JetStream="], Settings(Built(output)));
    }

    [Fact]
    public void An_unquoted_sync_interval_is_seconds_with_nats_servers_warning()
    {
        plugins.Add("filestore", "FileStore", whole: true);

        // Unquoted, 2m is the number 2,000,000 to nats-server's lexer, as it is to ours.
        mapper.Map(Entry("jetstream {\n  sync: 2m\n}"), new PluginBlock("jetstream", "JetStream", Whole: true));

        var mapping = Built(output);
        Assert.Equal(["Plugins:FileStore:sync_interval=2000000", "Plugins:JetStream="], Settings(mapping));
        var warning = Assert.Single(mapping.Diagnostics);
        Assert.Equal("invalid use of field \"sync\": sync should be converted to a duration", warning.Message);
    }

    [Fact]
    public void A_file_store_setting_in_the_jetstream_block_without_the_file_store_plugin_is_an_error()
    {
        mapper.Map(Entry("jetstream {\n  cipher: aes\n}"), new PluginBlock("jetstream", "JetStream", Whole: true));

        var diagnostic = Assert.Single(Built(output).Diagnostics);
        Assert.Equal("\"cipher\" is read by plugin FileStore, which is not loaded", diagnostic.Message);
    }

    [Fact]
    public void A_single_key_goes_under_its_name()
    {
        mapper.Map(Entry("allow_non_tls: true"), new PluginBlock("allow_non_tls", "Tls", Whole: false));

        Assert.Equal(["Plugins:Tls:allow_non_tls=true"], Settings(Built(output)));
    }

    [Fact]
    public void The_store_directory_may_be_written_once()
    {
        var entries = Entries("jetstream { store: /a }\nstore_dir: /b");

        mapper.Map(entries[0], new PluginBlock("jetstream", "JetStream", Whole: true));
        mapper.Map(entries[1], new PluginBlock("store_dir", "JetStream", Whole: false));

        var mapping = Built(output);
        Assert.Equal(["Plugins:JetStream=", "Plugins:JetStream:store=/a"], Settings(mapping));
        Assert.Equal(["Error test.conf:2:1: Duplicate 'store_dir' configuration"], Diagnostics(mapping));
    }

    [Fact]
    public void A_value_of_the_wrong_type_gets_nats_servers_message_and_reaches_no_plugin()
    {
        mapper.Map(Entry("mqtt: 1"), new PluginBlock("mqtt", "Mqtt", Whole: true));

        Assert.Empty(Built(output).Settings);
        Assert.Equal(["Error test.conf:1:1: interface conversion: interface {} is int64, not map[string]interface {}"], Diagnostics(Built(output)));
    }

    [Fact]
    public void A_key_of_an_unloaded_first_party_plugin_is_refused()
    {
        Assert.True(mapper.TryRefuseUnloaded(Entry("websocket {}")));
        Assert.True(mapper.TryRefuseUnloaded(Entry("\nallow_non_tls: 1")));
        Assert.False(mapper.TryRefuseUnloaded(Entry("mqtt {}")));

        Assert.Equal(
            [
                "Error test.conf:1:1: \"websocket\" is read by plugin WebSocket, which is not loaded",
                "Error test.conf:2:1: interface conversion: interface {} is int64, not bool",
            ],
            Diagnostics(Built(output)));
    }
}
