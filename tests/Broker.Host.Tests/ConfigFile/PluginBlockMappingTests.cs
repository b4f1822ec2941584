using Broker.Host.Configuration.ConfigFile;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// Top-level blocks and keys that loaded plugins read go to their <c>Plugins:&lt;Id&gt;</c> sections verbatim (nested
/// blocks and arrays intact, sizes already numbers), whatever the plugin; blocks no plugin reads keep nats-server's
/// unknown-field error; the broker's own plugins' blocks are errors without their plugin.
/// </summary>
public sealed class PluginBlockMappingTests
{
    private static readonly PluginBlocks Plugins = ConfMappingTests.Blocks(
        ("line", "Line", true), ("mqtt", "Mqtt", true), ("jetstream", "JetStream", true), ("js", "JetStream", true), ("store_dir", "JetStream", false));

    [Fact]
    public void A_third_partys_block_reaches_its_section_in_any_letter_case_with_nats_server_values()
    {
        AssertMaps(
            "LINE { port: 7000, max_line: 64KB, max_connections: 1k, idle_timeout: \"1m30s\", verbose: yes, ratio: 0.5 }",
            "Plugins:Line=", "Plugins:Line:port=7000", "Plugins:Line:max_line=65536", "Plugins:Line:max_connections=1000",
            "Plugins:Line:idle_timeout=1m30s", "Plugins:Line:verbose=true", "Plugins:Line:ratio=0.5");
    }

    [Fact]
    public void Nested_blocks_and_arrays_stay_intact()
    {
        AssertMaps(
            """
            mqtt {
              port: 1883
              tls { cert_file: "c.pem", key_file: "k.pem" }
              authorization { users = [ { user: a, password: b }, { user: c, password: d } ] }
              ack_wait: "1m"
            }
            """,
            "Plugins:Mqtt=", "Plugins:Mqtt:port=1883", "Plugins:Mqtt:tls:cert_file=c.pem", "Plugins:Mqtt:tls:key_file=k.pem",
            "Plugins:Mqtt:authorization:users:0:user=a", "Plugins:Mqtt:authorization:users:0:password=b",
            "Plugins:Mqtt:authorization:users:1:user=c", "Plugins:Mqtt:authorization:users:1:password=d",
            "Plugins:Mqtt:ack_wait=1m");
    }

    [Fact]
    public void An_empty_block_or_array_still_reaches_the_plugin()
    {
        AssertMaps("line {}\nmqtt { tls {}, listeners: [] }", "Plugins:Line=", "Plugins:Mqtt=", "Plugins:Mqtt:tls=", "Plugins:Mqtt:listeners=");
    }

    [Fact]
    public void Aliases_and_other_top_level_keys_go_to_the_plugins_section()
    {
        AssertMaps("js { max_mem: 1G }\nstore_dir: \"/data\"", "Plugins:JetStream=", "Plugins:JetStream:max_mem=1000000000", "Plugins:JetStream:store_dir=/data");
        AssertMaps("store_dir: \"/data\"", "Plugins:JetStream:store_dir=/data");
        AssertMaps("jetstream: enabled", "Plugins:JetStream=enabled");
    }

    [Theory]
    [InlineData("store_dir: /a\njetstream { store_dir: /b }", 2)]
    [InlineData("jetstream { store: /b }\nstore_dir: /a", 2)]
    public void The_store_directory_in_two_places_is_nats_servers_error(string conf, int line)
    {
        var mapping = ConfMappingTests.Map(conf, Plugins);

        var error = Assert.Single(mapping.Diagnostics, d => d.Kind == ConfDiagnosticKind.Error);
        Assert.Equal("Duplicate 'store_dir' configuration", error.Message);
        Assert.Equal(line, error.Position!.Value.Line);
    }

    [Fact]
    public void Where_each_setting_was_written_is_kept()
    {
        var mapping = ConfMappingTests.Map("port: 4222\nline {\n  port: 7000\n  users: [ a, b ]\n}", Plugins);

        Assert.Equal("test.conf:2:1", mapping.Positions["Plugins:Line"].ToString());
        Assert.Equal("test.conf:3:3", mapping.Positions["plugins:line:PORT"].ToString());
        Assert.Equal("test.conf:4:15", mapping.Positions["Plugins:Line:users:1"].ToString());
        Assert.False(mapping.Positions.ContainsKey("Broker:Port"));
    }

    [Theory]
    [InlineData("lines { port: 1 }", "test.conf:1:1: unknown field \"lines\"")]
    [InlineData("tls { cert_file: c.pem }", "test.conf:1:1: \"tls\" is read by plugin Tls, which is not loaded")]
    [InlineData("ws { port: 1 }", "test.conf:1:1: \"ws\" is read by plugin WebSocket, which is not loaded")]
    [InlineData("allow_non_tls: true", "test.conf:1:1: \"allow_non_tls\" is read by plugin Tls, which is not loaded")]
    [InlineData("mqtt: 1", "test.conf:1:1: interface conversion: interface {} is int64, not map[string]interface {}")]
    public void Blocks_no_loaded_plugin_reads_and_values_of_the_wrong_type_are_errors(string conf, string error)
    {
        var mapping = ConfMappingTests.Map(conf, Plugins);

        Assert.Equal([error], mapping.Diagnostics.Select(d => d.ToString()));
        Assert.Empty(mapping.Settings);
    }

    [Theory]
    [InlineData("port", "the broker reads it itself")]
    [InlineData("AUTHORIZATION", "the broker reads it itself")]
    [InlineData("operator", "the broker reads it itself")]
    [InlineData("accounts", "the broker reads it itself")]
    [InlineData("Line", "plugin Line reads it")]
    [InlineData("mqtt", "plugin Mqtt reads it")]
    [InlineData("cluster", "the broker reads it itself")]
    [InlineData("gateway", null)]
    [InlineData("my_plugin", null)]
    public void A_key_is_claimed_by_one_plugin_at_most_and_never_a_broker_key(string key, string? conflict)
    {
        Assert.Equal(conflict, Plugins.Conflict(key));
    }

    [Fact]
    public void Messages_name_a_plugins_section_by_its_block()
    {
        Assert.Equal("line", Plugins.NameOf("LINE"));
        Assert.Equal("jetstream", Plugins.NameOf("JetStream"));
        Assert.Equal("Plugins:Other", Plugins.NameOf("Other"));
    }

    private static void AssertMaps(string conf, params string[] expected)
    {
        ConfMappingTests.AssertMaps(conf, Plugins, expected);
        Assert.Empty(ConfMappingTests.Map(conf, Plugins).Diagnostics);
    }
}
