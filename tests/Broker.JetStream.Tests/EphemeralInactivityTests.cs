using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// An ephemeral pull consumer's inactive threshold against its unacknowledged deliveries, as nats-server 2.11.7+ has it
/// (<c>deleteNotActive</c>, <c>suppressDeletion</c>): a message still within its ack wait keeps the consumer, and the
/// threshold counts from the last acknowledgement.
/// </summary>
public sealed class EphemeralInactivityTests
{
    [Fact(Timeout = 30_000)]
    public async Task An_unacknowledged_delivery_keeps_a_pull_consumer_until_it_is_acknowledged()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("S", ["s"]) { Storage = StreamConfigStorage.Memory });
        (await js.PublishAsync("s", "one")).EnsureSuccess();
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig
        {
            AckPolicy = ConsumerConfigAckPolicy.Explicit,
            AckWait = TimeSpan.FromSeconds(30),
            InactiveThreshold = TimeSpan.FromMilliseconds(300),
        });
        var name = consumer.Info.Name;

        INatsJSMsg<string>? held = null;
        await foreach (var message in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 1, Expires = TimeSpan.FromSeconds(5) }))
        {
            held = message;
        }

        Assert.Equal("one", held?.Data);

        // Five thresholds without a request: the message is still within its ack wait, so the client may be working on
        // it (before, the consumer was deleted after one threshold, and the ack below went nowhere).
        await Task.Delay(1500);
        Assert.Equal(1, (await js.GetConsumerAsync("S", name)).Info.NumAckPending);

        // Acknowledged, nothing pending: gone a threshold after the ack.
        await held!.AckAsync(new AckOpts { DoubleAck = true });
        await Eventually.AssertAsync(async () => !await ExistsAsync(js, name), "the consumer to be deleted after its ack");
    }

    private static async Task<bool> ExistsAsync(NatsJSContext js, string name)
    {
        try
        {
            await js.GetConsumerAsync("S", name);
            return true;
        }
        catch (NatsJSApiException ex) when (ex.Error.ErrCode == 10014)
        {
            return false;
        }
    }
}
