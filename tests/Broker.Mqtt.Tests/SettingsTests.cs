using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal;
using Microsoft.Extensions.Configuration;

namespace Broker.Mqtt.Tests;

/// <summary>The mqtt { } block's keys and values, read through the contract's shared reader.</summary>
public sealed class SettingsTests
{
    private static IConfigurationSection Section(params (string Key, string Value)[] values)
        => new ConfigurationBuilder().AddInMemoryCollection(values.Select(v => new KeyValuePair<string, string?>("Plugins:Mqtt:" + v.Key, v.Value))).Build().GetSection("Plugins:Mqtt");

    [Fact]
    public void Nats_server_keys_and_our_own_are_read_with_their_syntax()
    {
        var options = MqttOptionsReader.Read(Section(
            ("listen", "127.0.0.1:1884"), ("ack_wait", "1m30s"), ("max_ack_pending", "100"), ("max_packet_size", "64KB"),
            ("authorization:username", "u"), ("authorization:password", "p"), ("authorization:timeout", "500ms"),
            ("reject_qos2_publish", "yes"), ("server_keep_alive", "30")));

        Assert.Equal("127.0.0.1", options.Host);
        Assert.Equal(1884, options.Port);
        Assert.Equal(TimeSpan.FromSeconds(90), options.AckWait);
        Assert.Equal(100, options.MaxAckPending);
        Assert.Equal(64 * 1024, options.MaxPacketSize);
        Assert.Equal("u", options.Username);
        Assert.Equal(TimeSpan.FromMilliseconds(500), options.ConnectTimeout);
        Assert.True(options.RejectQos2Publish);
        Assert.Equal(TimeSpan.FromSeconds(30), options.ServerKeepAlive);
    }

    [Fact]
    public void The_authorization_blocks_account_needs_its_user_or_token()
    {
        Assert.Null(MqttOptionsReader.Read(Section(("authorization:username", "u"), ("authorization:password", "p"))).Account);
        Assert.Equal("B", MqttOptionsReader.Read(Section(("authorization:username", "u"), ("authorization:password", "p"), ("authorization:account", "B"))).Account);
        Assert.Equal("B", MqttOptionsReader.Read(Section(("authorization:token", "t"), ("authorization:account", "B"))).Account);
        var error = Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section(("authorization:account", "B"))));
        Assert.Contains("authorization:account: names the account of the clients this block admits, so it needs a user name or a token", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("max_ack_pending")]
    [InlineData("max_pending")]
    [InlineData("max_inflight")]
    public void Max_ack_pending_has_nats_server_aliases_and_0_is_its_default(string key)
    {
        Assert.Equal(100, MqttOptionsReader.Read(Section((key, "100"))).MaxAckPending);
        Assert.Equal(ushort.MaxValue, MqttOptionsReader.Read(Section((key, "65535"))).MaxAckPending);
        Assert.Equal(1024, MqttOptionsReader.Read(Section((key, "0"))).MaxAckPending);
        Assert.Equal(1024, MqttOptionsReader.Read(Section()).MaxAckPending);
        Assert.Contains(key + ": must be a number from 0 to 65535, got 65536", Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section((key, "65536")))).Message, StringComparison.Ordinal);
        Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section((key, "-1"))));
    }

    [Fact]
    public void Two_names_of_one_setting_are_refused()
    {
        var error = Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section(("max_ack_pending", "10"), ("max_inflight", "20"))));
        Assert.Contains("max_ack_pending, max_inflight are one setting", error.Message, StringComparison.Ordinal);
        Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section(("consumer_inactive_threshold", "1m"), ("consumer_auto_cleanup", "1m"))));
        Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section(("js_api_timeout", "1s"), ("api_timeout", "1s"))));
    }

    [Fact]
    public void Consumer_keys_are_read_as_nats_server_applies_them()
    {
        var defaults = MqttOptionsReader.Read(Section());
        Assert.False(defaults.ConsumerMemoryStorage);
        Assert.Null(defaults.ConsumerInactiveThreshold);

        var options = MqttOptionsReader.Read(Section(("consumer_memory_storage", "true"), ("consumer_inactive_threshold", "1m30s")));
        Assert.True(options.ConsumerMemoryStorage);
        Assert.Equal(TimeSpan.FromSeconds(90), options.ConsumerInactiveThreshold);
        Assert.Equal(TimeSpan.FromSeconds(2), MqttOptionsReader.Read(Section(("consumer_auto_cleanup", "2"))).ConsumerInactiveThreshold);
        Assert.Null(MqttOptionsReader.Read(Section(("consumer_inactive_threshold", "0s"))).ConsumerInactiveThreshold);
        Assert.Contains("consumer_inactive_threshold: must be a positive duration", Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section(("consumer_inactive_threshold", "-1s")))).Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("stream_replicas", "every MQTT connection")]
    [InlineData("consumer_replicas", "every QoS 1 and 2 subscription")]
    public void More_than_one_replica_is_refused_on_a_single_server(string key, string whatNatsServerRefuses)
    {
        foreach (var accepted in new[] { "1", "0", "-1" })
        {
            MqttOptionsReader.Read(Section((key, accepted)));
        }

        var error = Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section((key, "3"))));
        Assert.StartsWith($"Plugins:Mqtt:{key}: 3 replicas need a JetStream cluster, and this broker is a single server", error.Message, StringComparison.Ordinal);
        Assert.Contains(whatNatsServerRefuses, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Js_domain_and_js_api_timeout_are_read_and_checked()
    {
        var defaults = MqttOptionsReader.Read(Section());
        Assert.Null(defaults.JetStreamDomain);
        Assert.Equal(TimeSpan.FromSeconds(4), defaults.JetStreamApiTimeout);

        var options = MqttOptionsReader.Read(Section(("js_domain", "hub"), ("js_api_timeout", "1.5s")));
        Assert.Equal("hub", options.JetStreamDomain);
        Assert.Equal(TimeSpan.FromSeconds(1.5), options.JetStreamApiTimeout);
        Assert.Equal(TimeSpan.FromSeconds(10), MqttOptionsReader.Read(Section(("api_timeout", "10"))).JetStreamApiTimeout);
        Assert.Equal(TimeSpan.FromSeconds(4), MqttOptionsReader.Read(Section(("js_api_timeout", "0"))).JetStreamApiTimeout);
        Assert.Null(MqttOptionsReader.Read(Section(("js_domain", ""))).JetStreamDomain);

        Assert.Contains("js_api_timeout: JS API timeout must be a positive value", Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section(("js_api_timeout", "-2s")))).Message, StringComparison.Ordinal);
        foreach (var bad in new[] { "a.b", "hub*", ">", "a b" })
        {
            Assert.Contains("js_domain: invalid domain name", Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section(("js_domain", bad)))).Message, StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData("max_ack_pending", "70000", "max_ack_pending")]
    [InlineData("ack_wait", "-1s", "ack_wait")]
    [InlineData("bogus", "1", "bogus")]
    [InlineData("port", "70000", "port")]
    [InlineData("reject_qos2_publish", "maybe", "reject_qos2_publish")]
    public void Bad_settings_are_refused_naming_the_key(string key, string value, string named)
    {
        var error = Assert.Throws<PluginConfigurationException>(() => MqttOptionsReader.Read(Section((key, value))));
        Assert.Contains(named, error.Message, StringComparison.Ordinal);
    }
}
