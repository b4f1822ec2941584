using System.Text.Json;
using Broker.Core;
using Broker.TestKit;
using MQTTnet.Formatter;

namespace Broker.Mqtt.Tests;

/// <summary>
/// <c>max_connections</c> as one hard limit for NATS, WebSocket and MQTT clients together, as nats-server keeps them
/// all in one client map: a flood of every protocol at once gets exactly the free places, each refused client hears
/// its protocol's refusal, and a reload that lowers the limit closes the newest connections beyond it.
/// </summary>
public sealed class ConnectionLimitTests
{
    private const int Limit = 8;

    [Fact(Timeout = 120_000)]
    public async Task A_mixed_flood_gets_exactly_the_free_places_round_after_round()
    {
        await using var broker = await StartAsync(Limit);
        var ws = WebSocketUri(broker);

        for (var round = 0; round < 5; round++)
        {
            var totalBefore = (await VarzAsync(broker)).GetProperty("total_connections").GetInt64();
            var attempts = new List<Func<Task<Attempt>>>();
            attempts.AddRange(Enumerable.Repeat<Func<Task<Attempt>>>(() => ConnectionLimitClients.NatsAsync(broker), 12));
            attempts.AddRange(Enumerable.Repeat<Func<Task<Attempt>>>(() => ConnectionLimitClients.NatsOverWebSocketAsync(ws), 8));
            attempts.AddRange(Enumerable.Repeat<Func<Task<Attempt>>>(() => ConnectionLimitClients.MqttAsync(broker, MqttProtocolVersion.V311), 6));
            attempts.AddRange(Enumerable.Repeat<Func<Task<Attempt>>>(() => ConnectionLimitClients.MqttAsync(broker, MqttProtocolVersion.V500), 6));
            attempts.AddRange(Enumerable.Repeat<Func<Task<Attempt>>>(() => ConnectionLimitClients.RawMqttAsync(broker, 4), 3));
            attempts.AddRange(Enumerable.Repeat<Func<Task<Attempt>>>(() => ConnectionLimitClients.RawMqttAsync(broker, 5), 3));

            var results = await ConnectionLimitClients.AllAtOnceAsync(attempts);
            try
            {
                var summary = $"round {round}: " + string.Join(", ", results.Select(a => $"{a.Kind}={(a.Admitted ? "in" : a.Answer)}"));
                Assert.True(results.Count(a => a.Admitted) == Limit, summary);
                foreach (var refused in results.Where(a => !a.Admitted))
                {
                    Assert.True(refused.Answer == RefusalOf(refused.Kind), summary);
                }

                // The broker's own counts agree with the clients', and every attempt was counted once in the total.
                var varz = await VarzAsync(broker);
                Assert.Equal(Limit, varz.GetProperty("connections").GetInt32());
                Assert.Equal(totalBefore + attempts.Count, varz.GetProperty("total_connections").GetInt64());
                var connz = await MonitorHttp.GetJsonAsync(broker, "/connz");
                Assert.Equal(Limit, connz.GetProperty("num_connections").GetInt32());
            }
            finally
            {
                await ConnectionLimitClients.LetGoAsync(results);
            }

            // Once they left, every place is free again for the next round.
            await Eventually.AssertAsync(async () => (await VarzAsync(broker)).GetProperty("connections").GetInt32() == 0, "every connection gone");
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task A_reload_lowering_the_limit_closes_the_newest_connections_beyond_it()
    {
        await using var broker = await StartAsync(10);
        var ws = WebSocketUri(broker);

        // Six connections of every kind, one after the other, so their cids give their age.
        var oldest = await RawClient.ConnectAsync(broker.EndPoint);
        await oldest.SendAsync("CONNECT {\"verbose\":false}\r\n");
        Assert.Equal(["PONG"], (await oldest.PingAndCollectAsync()).Lines);
        var kept = new List<Attempt>
        {
            await ConnectionLimitClients.MqttAsync(broker, MqttProtocolVersion.V311),
            await ConnectionLimitClients.NatsOverWebSocketAsync(ws),
            await ConnectionLimitClients.RawMqttAsync(broker, 5),
        };
        var mqttBeyond = await RawMqtt.ConnectedAsync(broker.MqttEndPoint(), "beyond", level: 4);
        var natsBeyond = await RawClient.ConnectAsync(broker.EndPoint);
        await natsBeyond.SendAsync("CONNECT {\"verbose\":false}\r\n");
        Assert.Equal(["PONG"], (await natsBeyond.PingAndCollectAsync()).Lines);
        Assert.All(kept, a => Assert.True(a.Admitted, a.Kind + ": " + a.Answer));
        var cids = await OpenCidsAsync(broker);
        Assert.Equal(6, cids.Count);

        try
        {
            // The settings the broker started with (TestBroker's and StartAsync's), but for the limit.
            var options = new BrokerOptions { Host = "127.0.0.1", Port = broker.Port };
            Configure(options, 4);
            var result = await broker.Server.ReloadAsync(options);
            Assert.True(result.Succeeded, result.Error);

            // The two newest are told and closed; the four oldest stay.
            Assert.Equal([ConnectionLimitClients.NatsRefusal], await natsBeyond.ExpectClosedAsync());
            Assert.True(await mqttBeyond.ClosedAsync());
            await Eventually.AssertAsync(async () => (await OpenCidsAsync(broker)).SequenceEqual(cids.Take(4)), "the four oldest open");
            var closed = await MonitorHttp.GetJsonAsync(broker, "/connz?state=closed");
            var closedReasons = closed.GetProperty("connections").EnumerateArray()
                .ToDictionary(c => c.GetProperty("cid").GetUInt64(), c => c.GetProperty("reason").GetString());
            Assert.Equal("Maximum Connections Exceeded", closedReasons[cids[4]]);
            Assert.Equal("Maximum Connections Exceeded", closedReasons[cids[5]]);
            Assert.Contains(broker.Logs.Entries, e => e.Message == "Closed 2 connections to fall within max_connections");
            Assert.Equal(4, (await VarzAsync(broker)).GetProperty("max_connections").GetInt32());
            await oldest.SendAsync("PING\r\n");
            Assert.Equal("PONG", await oldest.ReadLineAsync());

            // Full: a newcomer is refused until one of the four leaves.
            var refused = await ConnectionLimitClients.MqttAsync(broker, MqttProtocolVersion.V500);
            Assert.Equal(("ServerUnavailable", false), (refused.Answer, refused.Admitted));
            await oldest.DisposeAsync();
            await Eventually.AssertAsync(async () => (await VarzAsync(broker)).GetProperty("connections").GetInt32() == 3, "the oldest gone");
            var admitted = await ConnectionLimitClients.NatsAsync(broker);
            kept.Add(admitted);
            Assert.True(admitted.Admitted, admitted.Answer);
        }
        finally
        {
            await ConnectionLimitClients.LetGoAsync(kept);
            await oldest.DisposeAsync();
            await mqttBeyond.DisposeAsync();
            await natsBeyond.DisposeAsync();
        }
    }

    [Theory(Timeout = 60_000)]
    [InlineData(0, 65536)]
    [InlineData(-1, -1)]
    public async Task Zero_means_the_default_and_a_negative_limit_means_none(int configured, int reported)
    {
        await using var broker = await StartAsync(configured);

        var results = await ConnectionLimitClients.AllAtOnceAsync(
        [
            () => ConnectionLimitClients.NatsAsync(broker),
            () => ConnectionLimitClients.NatsOverWebSocketAsync(WebSocketUri(broker)),
            () => ConnectionLimitClients.MqttAsync(broker, MqttProtocolVersion.V311),
            () => ConnectionLimitClients.MqttAsync(broker, MqttProtocolVersion.V500),
        ]);
        try
        {
            Assert.All(results, a => Assert.True(a.Admitted, a.Kind + ": " + a.Answer));
            var varz = await VarzAsync(broker);
            Assert.Equal(reported, varz.GetProperty("max_connections").GetInt32());
            Assert.Equal(4, varz.GetProperty("connections").GetInt32());
        }
        finally
        {
            await ConnectionLimitClients.LetGoAsync(results);
        }
    }

    private static string RefusalOf(string kind) => kind switch
    {
        "nats" or "websocket" => ConnectionLimitClients.NatsRefusal,
        "mqtt3" or "mqtt5" => "ServerUnavailable",
        "raw-mqtt3" => "03",
        "raw-mqtt5" => "88",
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, null),
    };

    private static void Configure(BrokerOptions options, int maxConnections)
    {
        options.MaxConnections = maxConnections;
        options.Monitoring.Host = "127.0.0.1";
        options.Monitoring.Port = 0;
    }

    private static Task<TestBroker> StartAsync(int maxConnections) => MqttBroker.StartAsync(
        o => Configure(o, maxConnections),
        ("Plugins:WebSocket:host", "127.0.0.1"),
        ("Plugins:WebSocket:port", "-1"),
        ("Plugins:WebSocket:no_tls", "true"));

    private static Uri WebSocketUri(TestBroker broker)
        => new($"ws://127.0.0.1:{((System.Net.IPEndPoint)broker.Server.GetEndPoint("websocket")).Port}/");

    private static Task<JsonElement> VarzAsync(TestBroker broker) => MonitorHttp.GetJsonAsync(broker, "/varz");

    private static async Task<List<ulong>> OpenCidsAsync(TestBroker broker)
    {
        var connz = await MonitorHttp.GetJsonAsync(broker, "/connz?sort=cid");
        return [.. connz.GetProperty("connections").EnumerateArray().Select(c => c.GetProperty("cid").GetUInt64()).Order()];
    }
}
