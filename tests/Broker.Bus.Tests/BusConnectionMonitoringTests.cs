using System.Buffers;
using System.Net;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;
using NATS.Client.Core;

namespace Broker.Bus.Tests;

/// <summary>
/// Adapters' connections are connections: /connz lists them (kind, the protocol as type, name, address,
/// subscriptions, messages and bytes both ways, pending bytes, authorized user) and remembers them closed with their
/// reason; /varz and /metrics count them. Plain in-process clients stay out, as nats-server's internal clients do.
/// </summary>
public sealed class BusConnectionMonitoringTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(10);

    [Fact(Timeout = 60_000)]
    public async Task Connz_lists_an_adapter_connection_like_a_nats_one_and_leaves_internal_clients_out()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.Authorization.Users =
        [
            new UserOptions { User = "meter", Password = "pw" },
            new UserOptions { User = "nats", Password = "nats" },
        ]);
        await using var _ = broker;
        await using var internalClient = broker.Bus.CreateClient(new BusClientOptions { Name = "jetstream-like" });
        using var internalSub = internalClient.Subscribe("internal.>", null, (in BusMessage _) => { });

        await using var peer = await harness.ConnectAsync(broker);
        await using var meter = (await peer.ConnectAsync(broker.Bus, o => new() { Protocol = "mqtt", Name = "meter-17", User = "meter", Password = "pw" })).Connection!;
        var delivered = 0;
        using var readings = meter.Subscribe("readings.>", null, (in BusMessage _) => Interlocked.Increment(ref delivered));
        using var commands = meter.Subscribe("commands", "meters", (in BusMessage _, IBufferWriter<byte> output) => output.Write("cmd"u8));
        meter.Publish("telemetry.power", new byte[100]);
        meter.Publish("telemetry.power", new byte[50]);

        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url, AuthOpts = new() { Username = "nats", Password = "nats" } });
        await nats.PublishAsync("readings.a", new byte[10]);
        await nats.PublishAsync("commands", new byte[3]);
        await nats.PingAsync();
        Assert.True(await Eventually.TrueAsync(() => Volatile.Read(ref delivered) == 1, Wait));
        Assert.Equal("cmd", Encoding.ASCII.GetString(await peer.ReceiveAsync(3)));

        var info = (await MonitorHttp.ConnectionAsync(broker, meter.ConnectionId))!.Value;
        var local = (IPEndPoint)peer.Socket.LocalEndPoint!;
        Assert.Equal("Client", info.GetProperty("kind").GetString());
        Assert.Equal("mqtt", info.GetProperty("type").GetString());
        Assert.Equal("meter-17", info.GetProperty("name").GetString());
        Assert.Equal("meter-17", info.GetProperty("mqtt_client").GetString());
        Assert.Equal("127.0.0.1", info.GetProperty("ip").GetString());
        Assert.Equal(local.Port, info.GetProperty("port").GetInt32());
        Assert.Equal("meter", info.GetProperty("authorized_user").GetString());
        Assert.Equal(2, info.GetProperty("subscriptions").GetInt32());
        Assert.Equal(["commands", "readings.>"], info.GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()).Order());
        Assert.Equal((2, 150), (info.GetProperty("in_msgs").GetInt64(), info.GetProperty("in_bytes").GetInt64()));
        Assert.Equal((2, 13), (info.GetProperty("out_msgs").GetInt64(), info.GetProperty("out_bytes").GetInt64()));
        Assert.True(info.TryGetProperty("pending_bytes", out var pending) && pending.GetInt64() >= 0);

        // Filtered by the MQTT client id, as nats-server's /connz?mqtt_client=.
        var byClient = await MonitorHttp.GetJsonAsync(broker, "/connz?mqtt_client=meter-17");
        Assert.Equal(meter.ConnectionId, Assert.Single(byClient.GetProperty("connections").EnumerateArray()).GetProperty("cid").GetUInt64());

        // Listed: the adapter's connection and the NATS client; not the internal client.
        var connz = await MonitorHttp.GetJsonAsync(broker, "/connz");
        Assert.Equal(2, connz.GetProperty("num_connections").GetInt32());
        Assert.DoesNotContain(connz.GetProperty("connections").EnumerateArray(), c => c.TryGetProperty("name", out var n) && n.GetString() == "jetstream-like");

        var varz = await MonitorHttp.GetJsonAsync(broker, "/varz");
        Assert.Equal(2, varz.GetProperty("connections").GetInt32());
        Assert.Equal(2, varz.GetProperty("total_connections").GetInt64());
        Assert.True(varz.GetProperty("in_msgs").GetInt64() >= 4);
        Assert.True(varz.GetProperty("out_msgs").GetInt64() >= 2);

        var metrics = await MonitorHttp.GetTextAsync(broker, "/metrics");
        Assert.Contains(metrics.Split('\n'), line => line.StartsWith("broker_connections", StringComparison.Ordinal) && line.EndsWith(" 2", StringComparison.Ordinal));
    }

    [Fact(Timeout = 60_000)]
    public async Task Closed_adapter_connections_are_remembered_with_their_reason()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.Authorization.Users = [new UserOptions { User = "u", Password = "pw" }]);
        await using var _ = broker;

        await using var stalePeer = await harness.ConnectAsync(broker);
        var stale = (await stalePeer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, Name = "sleepy", User = "u", Password = "pw" })).Connection!;
        using var subscription = stale.Subscribe("x.>", null, (in BusMessage _) => { });
        stale.Close("Stale Connection");
        Assert.True(stale.Closed.IsCancellationRequested || await Eventually.TrueAsync(() => stale.Closed.IsCancellationRequested, Wait));
        Assert.Equal("Stale Connection", stale.CloseReason);

        await using var goodbyePeer = await harness.ConnectAsync(broker);
        var goodbye = (await goodbyePeer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, Name = "polite", User = "u", Password = "pw" })).Connection!;
        await goodbye.DisposeAsync();

        await using var refusedPeer = await harness.ConnectAsync(broker);
        Assert.False((await refusedPeer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, Name = "intruder", User = "u", Password = "guess" })).Succeeded);

        var closed = await MonitorHttp.GetJsonAsync(broker, "/connz?state=closed&subs=1");
        var byName = closed.GetProperty("connections").EnumerateArray().ToDictionary(c => c.GetProperty("name").GetString()!);
        Assert.Equal("Stale Connection", byName["sleepy"].GetProperty("reason").GetString());
        Assert.Equal(["x.>"], byName["sleepy"].GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()));
        Assert.Equal("Client Closed", byName["polite"].GetProperty("reason").GetString());
        Assert.Equal("Authentication Failure", byName["intruder"].GetProperty("reason").GetString());
        Assert.All(byName.Values, c => Assert.Equal(AdapterHarness.ProtocolName, c.GetProperty("type").GetString()));

        var varz = await MonitorHttp.GetJsonAsync(broker, "/varz");
        Assert.Equal(0, varz.GetProperty("connections").GetInt32());
        Assert.Equal(3, varz.GetProperty("total_connections").GetInt64());
        Assert.Throws<ObjectDisposedException>(() => goodbye.Subscribe("y", null, (in BusMessage _) => { }));
    }

    [Fact(Timeout = 60_000)]
    public async Task Lame_duck_mode_closes_adapter_connections_with_the_nats_ones()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o =>
        {
            o.LameDuckGracePeriod = TimeSpan.FromMilliseconds(50);
            o.LameDuckDuration = TimeSpan.FromMilliseconds(300);
        });
        await using var _ = broker;
        await using var peer = await harness.ConnectAsync(broker);
        var adapter = (await peer.ConnectAsync(broker.Bus)).Connection!;
        adapter.WriteOutput(0, static (output, _) => output.Write("bye?"u8));

        await broker.Server.EnterLameDuckModeAsync().WaitAsync(Wait);

        Assert.True(await Eventually.TrueAsync(() => adapter.Closed.IsCancellationRequested, Wait));
        Assert.Equal("Server Shutdown", adapter.CloseReason);

        // The output was completed, not dropped: what was written reached the peer before the transport closed.
        Assert.Equal("bye?", Encoding.ASCII.GetString(await peer.ReceiveAsync(4)));
    }
}
