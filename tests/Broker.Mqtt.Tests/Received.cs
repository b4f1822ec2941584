using System.Threading.Channels;
using MQTTnet;

namespace Broker.Mqtt.Tests;

/// <summary>The messages an MQTTnet client receives, in order, with a deadline on each wait.</summary>
public sealed class Received
{
    private readonly Channel<MqttApplicationMessage> messages = Channel.CreateUnbounded<MqttApplicationMessage>();

    public Received(IMqttClient client)
    {
        client.ApplicationMessageReceivedAsync += e =>
        {
            messages.Writer.TryWrite(e.ApplicationMessage);
            return Task.CompletedTask;
        };
    }

    public async Task<MqttApplicationMessage> NextAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? MqttBroker.Timeout);
        return await messages.Reader.ReadAsync(cts.Token);
    }

    /// <summary>Asserts that nothing arrives within <paramref name="wait"/>.</summary>
    public async Task NoneAsync(TimeSpan? wait = null)
    {
        await Task.Delay(wait ?? TimeSpan.FromMilliseconds(300));
        Assert.False(messages.Reader.TryRead(out var message), $"unexpected message on {message?.Topic}");
    }
}
