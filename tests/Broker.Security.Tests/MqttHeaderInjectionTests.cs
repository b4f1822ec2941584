using System.Text;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Packets;
using MQTTnet.Protocol;

namespace Broker.Security.Tests;

/// <summary>
/// MQTT publishes seen by a NATS subscriber at the byte level: the header block the broker builds must stay one valid
/// block whatever the client puts in MQTT 5 user properties. nats-server has no MQTT 5, so the 3.1.1 block is compared
/// with it and the MQTT 5 cases are ours.
/// </summary>
public sealed class MqttHeaderInjectionTests
{
    private static readonly SecurityUser Admin = SecurityUsers.Admin;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_311_publish_carries_only_the_nmqtt_pub_header(ServerKind kind)
    {
        await using var server = await MqttSecurityServer.StartAsync(kind, [Admin]);
        await using var nats = await SubscribeRawAsync(server, "t.>");
        using var client = await server.MqttAsync(Admin);
        await client.SendAsync("t/x", "p");

        var (headers, payload) = await ReadMessageAsync(nats);
        Assert.Equal("NATS/1.0\r\nNmqtt-Pub:1\r\n\r\n", headers);
        Assert.Equal("p", payload);
    }

    [Fact(Timeout = 60_000)]
    public async Task Mqtt5_user_properties_cannot_forge_or_break_the_header_block()
    {
        await using var server = await MqttSecurityServer.StartAsync(ServerKind.Ours, [Admin]);
        await using var nats = await SubscribeRawAsync(server, "t.>");
        using var client = await server.MqttAsync(Admin, MqttProtocolVersion.V500);
        var message = new MqttApplicationMessageBuilder().WithTopic("t/x").WithPayload("p").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce)
            .WithUserProperty("Nmqtt-Pub", Utf8("2"))
            .WithUserProperty("nmqtt-pub", Utf8("21"))
            .WithUserProperty("NMQTT-Origin", Utf8("victim"))
            .WithUserProperty("X-Name\r\nNmqtt-Pub", Utf8("2"))
            .WithUserProperty("X-Value", Utf8("a\r\nNmqtt-Pub: 2"))
            .WithUserProperty("X-Lf", Utf8("a\nb"))
            .WithUserProperty("X Space", Utf8("v"))
            .WithUserProperty("X:Colon", Utf8("v"))
            .WithUserProperty("Nats-Msg-Id", Utf8("m-1"))
            .WithUserProperty("Nats-Expected-Stream", Utf8("OTHER"))
            .WithUserProperty("X-Ok", Utf8("fine: yes"))
            .Build();
        using (var cts = new CancellationTokenSource(MqttSecurityServer.Timeout))
        {
            Assert.Equal(MqttClientPublishReasonCode.Success, (await client.PublishAsync(message, cts.Token)).ReasonCode);
        }

        var (headers, payload) = await ReadMessageAsync(nats);

        // One block, one Nmqtt-Pub (the real QoS), no line a property's CR or LF started; NATS-level headers pass as
        // plain headers, as a NATS client with the same publish permission could send them.
        Assert.Equal("NATS/1.0\r\nNmqtt-Pub:1\r\nNats-Msg-Id: m-1\r\nNats-Expected-Stream: OTHER\r\nX-Ok: fine: yes\r\n\r\n", headers);
        Assert.Equal("p", payload);
    }

    private static ReadOnlyMemory<byte> Utf8(string value) => Encoding.UTF8.GetBytes(value);

    private static async Task<RawClient> SubscribeRawAsync(MqttSecurityServer server, string subject)
    {
        var client = await RawClient.ConnectAsync(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, new Uri(server.Url).Port));
        await client.SendAsync(Admin.Connect + $"SUB {subject} 1\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        return client;
    }

    /// <summary>The next HMSG: its header block and payload, exactly as sent.</summary>
    private static async Task<(string Headers, string Payload)> ReadMessageAsync(RawClient client)
    {
        while (true)
        {
            var line = await client.ReadLineAsync(MqttSecurityServer.Timeout);
            if (line == "PING")
            {
                await client.SendAsync("PONG\r\n");
                continue;
            }

            Assert.StartsWith("HMSG ", line, StringComparison.Ordinal);
            var parts = line.Split(' ');
            var headerLength = int.Parse(parts[^2], System.Globalization.CultureInfo.InvariantCulture);
            var total = int.Parse(parts[^1], System.Globalization.CultureInfo.InvariantCulture);
            var bytes = await client.ReadBytesAsync(total + 2);
            Assert.Equal("\r\n", Encoding.ASCII.GetString(bytes, total, 2));
            return (Encoding.ASCII.GetString(bytes, 0, headerLength), Encoding.ASCII.GetString(bytes, headerLength, total - headerLength));
        }
    }
}
