using System.Collections.Concurrent;

namespace Broker.Security.Tests;

/// <summary>
/// max_connections, max_subscriptions and max_payload under a flood from several clients at once, on our broker and
/// nats-server 2.9.10: the limit holds exactly, the flooders get nats-server's error, and a subscriber that was there
/// first loses nothing.
/// </summary>
public sealed class ConnectionFloodTests(Xunit.Abstractions.ITestOutputHelper output)
{
    private Xunit.Abstractions.ITestOutputHelper Output { get; } = output;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_connections_holds_under_a_flood_and_the_admitted_keep_working(ServerKind kind)
    {
        const int limit = 12;
        await using var server = await ServerUnderTest.StartAsync(kind, o => o.MaxConnections = limit, $"max_connections: {limit}");
        await using var subscriber = await server.ConnectAsync();
        await subscriber.SendAsync("CONNECT {\"verbose\":false}\r\nSUB flood 1\r\n");
        Assert.Equal(["PONG"], (await subscriber.PingAndCollectAsync()).Lines);

        // Four flooders open eight connections each, all at once: 32 attempts for 11 free places.
        var admitted = new ConcurrentBag<RawClient>();
        var refused = new ConcurrentBag<string>();
        await FloodAsync(server, 4, 8, admitted, refused);

        try
        {
            Assert.True(admitted.Count == limit - 1, $"{admitted.Count} admitted; refused: {string.Join(" / ", refused.Take(3))}");
            Assert.All(refused, text => Assert.Equal("-ERR 'maximum connections exceeded'", text));

            // Every admitted connection publishes; the first subscriber gets every message.
            foreach (var client in admitted)
            {
                await client.SendAsync("PUB flood 1\r\nx\r\n");
                Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines.Where(l => !l.StartsWith("INFO ", StringComparison.Ordinal)));
            }

            var lines = (await subscriber.PingAndCollectAsync()).Lines;
            Assert.Equal(limit - 1, lines.Count(l => l.StartsWith("MSG flood 1 1", StringComparison.Ordinal)));

            // Three leave; a second flood gets exactly their places, whatever the refused ones still hold.
            var leaving = admitted.Take(3).ToList();
            foreach (var client in leaving)
            {
                await client.DisposeAsync();
            }

            // A probe waits until a place is free (the leavers are gone) and keeps it: two are left for the flood.
            await Eventually.AssertAsync(
                async () =>
                {
                    var probe = await RawClient.ConnectAsync(server.EndPoint, readInfo: false);
                    await probe.SendAsync("CONNECT {\"verbose\":false}\r\n");
                    if ((await probe.PingAndCollectAsync()).Closed)
                    {
                        await probe.DisposeAsync();
                        return false;
                    }

                    admitted.Add(probe);
                    return true;
                },
                "a free place");
            await Task.Delay(200); // the other two leavers' places
            var second = new ConcurrentBag<RawClient>();
            await FloodAsync(server, 4, 8, second, refused);
            var secondCount = second.Count;
            foreach (var client in second)
            {
                admitted.Add(client);
            }

            Assert.Equal(2, secondCount);
        }
        finally
        {
            foreach (var client in admitted)
            {
                await client.DisposeAsync();
            }
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_connections_counts_mqtt_clients_too(ServerKind kind)
    {
        const int limit = 6;
        await using var server = await MqttSecurityServer.StartAsync(kind, [SecurityUsers.Admin], limit);
        await using var nats = await server.NatsAsync(SecurityUsers.Admin);

        // Ten MQTT clients at once for the places the NATS connection leaves (nats-server's own internal MQTT
        // clients are not counted).
        var outcomes = await Task.WhenAll(Enumerable.Range(0, 10).Select(async _ =>
        {
            try
            {
                return (object)await server.MqttAsync(SecurityUsers.Admin);
            }
            catch (Exception ex) when (ex is MQTTnet.Exceptions.MqttCommunicationException or MQTTnet.Adapter.MqttConnectingFailedException or OperationCanceledException)
            {
                return ex.GetType().Name + ": " + ex.Message;
            }
        }));

        // MQTTnet reports a refused CONNECT either by throwing or by returning a client that is not connected.
        var clients = outcomes.OfType<MQTTnet.IMqttClient>().ToList();
        var connected = clients.Where(c => c.IsConnected).ToList();
        try
        {
            Output.WriteLine(kind + ": " + string.Join(", ", outcomes.Select(o => o is string s ? s : ((MQTTnet.IMqttClient)o).IsConnected ? "connected" : "refused")));
            Assert.Equal(limit - 1, connected.Count);
            await nats.PingAsync();
        }
        finally
        {
            foreach (var client in clients)
            {
                client.Dispose();
            }
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_subscriptions_counts_mqtt_subscriptions_too(ServerKind kind)
    {
        await using var server = await MqttSecurityServer.StartAsync(kind, [SecurityUsers.Admin], 0, maxSubscriptions: 3);
        using var client = await server.MqttAsync(SecurityUsers.Admin);
        var inbox = new MqttInbox(client);

        var codes = await client.SubscribeEachAsync("t/1", "t/2", "t/3", "t/4", "t/5");

        var granted = MQTTnet.MqttClientSubscribeResultCode.GrantedQoS0;
        var failed = MQTTnet.MqttClientSubscribeResultCode.UnspecifiedError;
        Assert.Equal([granted, granted, granted, failed, failed], codes);
        await using var nats = await server.NatsAsync(SecurityUsers.Admin);
        await nats.PublishAsync("t.4", "no");
        await nats.PublishAsync("t.3", "yes");
        Assert.Equal(["t/3=yes"], await inbox.UntilAsync("t/3"));
    }

    private static async Task FloodAsync(ServerUnderTest server, int flooders, int each, ConcurrentBag<RawClient> admitted, ConcurrentBag<string> refused)
    {
        await Task.WhenAll(Enumerable.Range(0, flooders).Select(_ => Task.Run(async () =>
        {
            await Task.WhenAll(Enumerable.Range(0, each).Select(async _ =>
            {
                var client = await RawClient.ConnectAsync(server.EndPoint, readInfo: false);
                await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
                var transcript = await client.PingAndCollectAsync(TimeSpan.FromSeconds(10));
                if (transcript.Closed)
                {
                    refused.Add(string.Join(" | ", transcript.Lines.Where(l => !l.StartsWith("INFO ", StringComparison.Ordinal))));
                    await client.DisposeAsync();
                }
                else
                {
                    admitted.Add(client);
                }
            }));
        })));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_subscriptions_holds_per_connection_under_a_flood(ServerKind kind)
    {
        const int limit = 40;
        await using var server = await ServerUnderTest.StartAsync(kind, o => o.MaxSubscriptions = limit, $"max_subscriptions: {limit}");

        // Four clients each send 100 SUBs in one write, at once.
        var transcripts = await Task.WhenAll(Enumerable.Range(0, 4).Select(c => Task.Run(async () =>
        {
            await using var client = await server.ConnectAsync();
            var subs = string.Concat(Enumerable.Range(0, 100).Select(i => $"SUB s.{c}.{i} {i}\r\n"));
            await client.SendAsync("CONNECT {\"verbose\":false}\r\n" + subs + $"PUB s.{c}.{limit - 1} 1\r\nx\r\nPUB s.{c}.{limit} 1\r\ny\r\n");
            return await client.PingAndCollectAsync(TimeSpan.FromSeconds(20));
        })));

        for (var c = 0; c < 4; c++)
        {
            var lines = transcripts[c].Lines;
            Assert.False(transcripts[c].Closed);
            Assert.Equal(100 - limit, lines.Count(l => l == "-ERR 'maximum subscriptions exceeded'"));
            Assert.Equal(["MSG s." + c + "." + (limit - 1) + " " + (limit - 1) + " 1", "x", "PONG"], lines.Where(l => !l.StartsWith("-ERR", StringComparison.Ordinal)));
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Oversized_payloads_close_only_their_senders(ServerKind kind)
    {
        const int limit = 1024;
        await using var server = await ServerUnderTest.StartAsync(kind, o => o.MaxPayload = limit, $"max_payload: {limit}");
        await using var subscriber = await server.ConnectAsync();
        await subscriber.SendAsync("CONNECT {\"verbose\":false}\r\nSUB good 1\r\n");
        Assert.Equal(["PONG"], (await subscriber.PingAndCollectAsync()).Lines);
        await using var good = await server.ConnectAsync();
        await good.SendAsync("CONNECT {\"verbose\":false}\r\n");

        // Eight flooders announce payloads over the limit while the good publisher sends 500 messages at the limit.
        var body = new string('g', limit);
        var goodTask = Task.Run(async () =>
        {
            for (var i = 0; i < 500; i++)
            {
                await good.SendAsync($"PUB good {limit}\r\n{body}\r\n");
            }

            return await good.PingAndCollectAsync(TimeSpan.FromSeconds(20));
        });
        var bad = await Task.WhenAll(Enumerable.Range(0, 8).Select(_ => Task.Run(async () =>
        {
            await using var client = await server.ConnectAsync();
            await client.SendAsync($"CONNECT {{\"verbose\":false}}\r\nPUB good {limit + 1}\r\n{body}x\r\n");
            return await client.PingAndCollectAsync(TimeSpan.FromSeconds(10));
        })));

        Assert.All(bad, t => Assert.Equal("-ERR 'Maximum Payload Violation' [closed]", t.ToString()));
        Assert.Equal(["PONG"], (await goodTask).Lines);
        var received = 0;
        while (received < 500)
        {
            var line = await subscriber.ReadLineAsync(TimeSpan.FromSeconds(10));
            if (line == "PING")
            {
                await subscriber.SendAsync("PONG\r\n");
                continue;
            }

            Assert.Equal($"MSG good 1 {limit}", line);
            Assert.Equal(body, await subscriber.ReadLineAsync());
            received++;
        }

        Assert.Equal(["PONG"], (await subscriber.PingAndCollectAsync()).Lines);
    }
}
