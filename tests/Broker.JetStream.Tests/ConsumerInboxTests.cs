using System.Text;
using Broker.TestKit;
using NATS.Client.Core;
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

    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    /// <summary>
    /// With the consumer gone (its stream kept, another consumer left on it), an ack with a reply to its subject gets "no
    /// responders" and a pull request no answer at all, as from nats-server 2.9.10 (whose account imports
    /// <c>$JS.API.&gt;</c>, so the pull request has a subscriber that ignores it): one wildcard per stream must not
    /// swallow the ack's 503.
    /// </summary>
    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Kinds))]
    public async Task An_ack_to_a_deleted_consumer_gets_no_responders_and_a_pull_request_no_answer(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        await using var connection = server.Connect();
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""");
        await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S.KEPT", """{"stream_name":"S","config":{"durable_name":"KEPT","ack_policy":"explicit"}}""");
        await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S.GONE", """{"stream_name":"S","config":{"durable_name":"GONE","ack_policy":"explicit"}}""");
        await RequestAsync(connection, "$JS.API.CONSUMER.DELETE.S.GONE", "");

        await Assert.ThrowsAsync<NatsNoRespondersException>(() => RequestAsync(connection, "$JS.ACK.S.GONE.1.1.1.1700000000000000000.0", ""));
        await Assert.ThrowsAsync<NatsNoReplyException>(() => RequestAsync(connection, "$JS.API.CONSUMER.MSG.NEXT.S.GONE", """{"batch":1,"expires":500000000}""", timeout: TimeSpan.FromSeconds(1)));
    }

    private static async Task<byte[]?> RequestAsync(NatsConnection connection, string subject, string body, TimeSpan? timeout = null)
        => (await connection.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(body), replyOpts: new NatsSubOpts { Timeout = timeout ?? TimeSpan.FromSeconds(5) })).Data;
}
