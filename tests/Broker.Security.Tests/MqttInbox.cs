using MQTTnet;

namespace Broker.Security.Tests;

/// <summary>What an MQTT client received, in order, as <c>topic=payload</c> (with <c>(r)</c> for retained).</summary>
internal sealed class MqttInbox
{
    private readonly System.Threading.Channels.Channel<string> messages = System.Threading.Channels.Channel.CreateUnbounded<string>();

    public MqttInbox(IMqttClient client)
    {
        client.ApplicationMessageReceivedAsync += e =>
        {
            var message = e.ApplicationMessage;
            messages.Writer.TryWrite($"{message.Topic}={message.ConvertPayloadToString()}{(message.Retain ? "(r)" : string.Empty)}");
            return Task.CompletedTask;
        };
    }

    /// <summary>Everything received up to and including the first message whose topic is <paramref name="sentinel"/>.</summary>
    public async Task<List<string>> UntilAsync(string sentinel)
    {
        var received = new List<string>();
        using var cts = new CancellationTokenSource(MqttSecurityServer.Timeout);
        while (true)
        {
            var next = await messages.Reader.ReadAsync(cts.Token);
            received.Add(next);
            if (next.StartsWith(sentinel + "=", StringComparison.Ordinal))
            {
                return received;
            }
        }
    }
}
