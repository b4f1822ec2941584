using System.Diagnostics;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Streams;
using Broker.TestKit;
using Broker.JetStream.Tests.Streams;

namespace Broker.JetStream.Tests.Consumers;

/// <summary>
/// A client's first pull request follows its consumer's create reply at once: whatever it is delivered through (the
/// stream's <c>ConsumerInbox</c>, its pull-request subscription, the delivery runner's wake-up) must be in place by then,
/// or the request is lost and the client waits for its batch until it gives up (the harness's <c>js-ordered-128</c>
/// smoke row, an ephemeral ack-none consumer made on a fresh stream and read with batches of 1,000, stalled so).
/// </summary>
public sealed class DeliveryWakeupTests
{
    private const int Messages = 20;

    [Fact(Timeout = 30_000)]
    public async Task A_pull_request_sent_before_the_create_replys_kick_is_served()
    {
        await using var broker = await TestBroker.StartAsync();
        using var directory = new TempDirectory("js-wakeup-");
        var interest = new TestInterest();
        interest.Listening.Add("reply.C");
        var (account, stream) = await StreamTestKit.StreamAsync(broker, directory.Path, StreamValidation.Normalize(new Internal.Models.StreamConfig { Name = "S", Subjects = ["s.>"], Storage = "memory" }, 120_000_000_000), interest);
        try
        {
            for (var i = 0; i < 3; i++)
            {
                StreamTestKit.Store(stream.Store, "s.x");
            }

            // The stream's first consumer, made and started as the API does before its reply; the kick the API sends
            // after the reply is not sent (a thread late to send it): the client's request must not depend on it.
            var config = new Internal.Models.ConsumerConfig { Name = "C", AckPolicy = ConsumerAckPolicy.None };
            ConsumerValidation.ApplyDefaults(config, 1000);
            var consumer = Consumer.Create(stream, "C", config);
            stream.AddConsumer(consumer);
            consumer.Start();

            await using var client = new NatsConnection(new NatsOpts { Url = broker.Url });
            await client.ConnectAsync();
            await using var inbox = await client.SubscribeCoreAsync<string>("reply.C");
            await client.PingAsync();
            await client.PublishAsync("$JS.API.CONSUMER.MSG.NEXT.S.C", "{\"batch\":10,\"expires\":30000000000}", replyTo: "reply.C");

            using var stall = new CancellationTokenSource(TimeSpan.FromSeconds(5));
            var received = new List<string>();
            try
            {
                await foreach (var msg in inbox.Msgs.ReadAllAsync(stall.Token))
                {
                    received.Add($"{msg.Subject} {msg.Headers?.Code} {msg.Data}");
                    if (received.Count == 3)
                    {
                        break;
                    }
                }
            }
            catch (OperationCanceledException)
            {
            }

            // Without the stream's inbox the request meets no subscriber and is answered 503 (no responders).
            Assert.Equal(["s.x  x", "s.x  x", "s.x  x"], received);
        }
        finally
        {
            await stream.StopAsync(deleteData: true);
            account.Engine.Pauses.Dispose();
        }
    }

    [Fact(Timeout = 120_000)]
    public async Task Ephemeral_ack_none_consumers_fetching_right_after_their_creation_always_get_the_stream()
    {
        await using var server = await JetStreamServer.StartAsync();

        // Each round is a new stream whose first consumer is read at once, several clients at once, for a time.
        var budget = Stopwatch.StartNew();
        var workers = Enumerable.Range(0, 3).Select(async worker =>
        {
            var (connection, js) = await server.ConnectJetStreamAsync();
            await using var _ = connection;
            var rounds = 0;
            while (budget.Elapsed < TimeSpan.FromSeconds(30) && rounds < 60)
            {
                rounds++;
                var stream = $"W{worker}_{rounds}";
                await js.CreateStreamAsync(new NATS.Client.JetStream.Models.StreamConfig(stream, [$"w{worker}.{rounds}"]) { Storage = StreamConfigStorage.Memory });
                for (var i = 0; i < Messages; i++)
                {
                    (await js.PublishAsync($"w{worker}.{rounds}", i)).EnsureSuccess();
                }

                var consumer = await js.CreateOrUpdateConsumerAsync(stream, new NATS.Client.JetStream.Models.ConsumerConfig
                {
                    AckPolicy = ConsumerConfigAckPolicy.None,
                    InactiveThreshold = TimeSpan.FromSeconds(5),
                    MemStorage = true,
                });
                var received = 0;
                using var stall = new CancellationTokenSource(TimeSpan.FromSeconds(5));
                try
                {
                    await foreach (var msg in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 1000, Expires = TimeSpan.FromSeconds(30) }, cancellationToken: stall.Token))
                    {
                        if (++received == Messages)
                        {
                            break;
                        }
                    }
                }
                catch (OperationCanceledException)
                {
                }

                Assert.True(received == Messages, $"worker {worker}, round {rounds}: {received} of {Messages} messages, then nothing for 5 s");
                await js.DeleteStreamAsync(stream);
            }

            return rounds;
        }).ToList();

        var total = (await Task.WhenAll(workers)).Sum();
        Assert.True(total >= 20, $"only {total} rounds ran");
    }
}
