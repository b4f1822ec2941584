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
        var options = MqttSettings.Read(Section(
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

    [Theory]
    [InlineData("max_ack_pending", "70000", "max_ack_pending")]
    [InlineData("ack_wait", "-1s", "ack_wait")]
    [InlineData("bogus", "1", "bogus")]
    [InlineData("port", "70000", "port")]
    [InlineData("reject_qos2_publish", "maybe", "reject_qos2_publish")]
    public void Bad_settings_are_refused_naming_the_key(string key, string value, string named)
    {
        var error = Assert.Throws<PluginConfigurationException>(() => MqttSettings.Read(Section((key, value))));
        Assert.Contains(named, error.Message, StringComparison.Ordinal);
    }
}
