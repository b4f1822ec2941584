using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// The consumers of one stream share one ack and one pull-request subscription (ConsumerInbox), routed by the consumer
/// name token: acks, naks and pulls reach their own consumer only, whatever the names share (a prefix, non-ASCII).
/// </summary>
public class ConsumerInboxTests
{
    [Fact(Timeout = 30_000)]
    public async Task Acks_and_pulls_of_consumers_of_one_stream_reach_their_own_consumer_by_name()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("S", ["s.>"]) { Storage = StreamConfigStorage.Memory });
        for (var i = 1; i <= 3; i++)
        {
            (await js.PublishAsync("s.x", $"m{i}")).EnsureSuccess();
        }

        string[] names = ["A", "AB", "Zürich-東京"];
        var consumers = new List<INatsJSConsumer>();
        foreach (var name in names)
        {
            consumers.Add(await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig(name) { AckPolicy = ConsumerConfigAckPolicy.Explicit, AckWait = TimeSpan.FromSeconds(30) }));
        }

        // Each pulls all three (its own pull request), then: A acks all, AB acks none, the third acks one with a confirmation.
        var fetched = new List<List<INatsJSMsg<string>>>();
        foreach (var consumer in consumers)
        {
            var list = new List<INatsJSMsg<string>>();
            await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 3, Expires = TimeSpan.FromSeconds(2) }))
            {
                list.Add(msg);
            }

            Assert.Equal(["m1", "m2", "m3"], list.Select(m => m.Data));
            fetched.Add(list);
        }

        foreach (var msg in fetched[0])
        {
            await msg.AckAsync();
        }

        await fetched[2][1].AckAsync(new AckOpts { DoubleAck = true });

        long[] expected = [0, 3, 2];
        for (var i = 0; i < consumers.Count; i++)
        {
            await consumers[i].RefreshAsync();
            Assert.Equal(expected[i], consumers[i].Info.NumAckPending);
        }
    }
}
