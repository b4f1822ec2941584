using Broker.Adapters.Mqtt.Internal.Connections;
using Broker.Adapters.Mqtt.Internal.Accounts;
using Microsoft.Extensions.DependencyInjection;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests;

/// <summary>
/// A CONNECT that arrives while the adapter's state is still loading (<see cref="MqttAccount.Ready"/>, JetStream's
/// streams at start) waits for it, past the CONNECT timeout, and is refused with "server unavailable" when the state
/// does not come in time. The loading is held by the test through the handler's accounts.
/// </summary>
public sealed class StateLoadingTests
{
    [Fact(Timeout = 30_000)]
    public async Task A_connect_waits_for_the_state_beyond_the_connect_timeout()
    {
        await using var broker = await MqttBroker.StartAsync(("authorization:timeout", "0.5"));
        var loading = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        broker.Server.Services.GetRequiredService<MqttProtocolHandler>().Accounts.Loader = _ => loading.Task;

        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(Connect("waiting"));
        await Task.Delay(TimeSpan.FromSeconds(1.5));
        loading.SetResult();

        var (header, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal([0x00, 0x00], body);

        // Connected for good: the CONNECT timeout that passed while it waited does not close it afterwards.
        await Task.Delay(TimeSpan.FromSeconds(0.5));
        await raw.SendAsync(0xC0, 0x00);
        Assert.Equal(0xD0, (await raw.ReadPacketAsync()).Header);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_connect_is_refused_server_unavailable_when_the_state_does_not_come()
    {
        await using var broker = await MqttBroker.StartAsync();
        broker.Server.Services.GetRequiredService<MqttProtocolHandler>().Accounts.Loader = _ => new TaskCompletionSource().Task;

        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(Connect("refused"));
        var (header, body) = await raw.ReadPacketAsync(MqttAccount.ReadyTimeout + TimeSpan.FromSeconds(5));
        Assert.Equal(0x20, header);
        Assert.Equal([0x00, 0x03], body);
        Assert.True(await raw.ClosedAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Without_JetStream_the_in_memory_notice_comes_with_the_first_MQTT_client_not_at_start()
    {
        const string Notice = "MQTT state in memory";
        await using var broker = await MqttBroker.StartAsync();
        Assert.False(broker.Logs.Contains(Notice), "notice at start");

        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(Connect("first"));
        Assert.Equal(0x20, (await raw.ReadPacketAsync()).Header);
        Assert.True(await Broker.TestKit.Eventually.TrueAsync(() => broker.Logs.Contains(Notice)), "no notice after the first client");
    }
}
