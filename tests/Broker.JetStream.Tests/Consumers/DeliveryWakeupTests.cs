using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Streams;
using Broker.JetStream.Tests.Streams;
using Broker.TestKit;
using NATS.Client.Core;

namespace Broker.JetStream.Tests.Consumers;

/// <summary>
/// A client's first pull request follows its consumer's create reply at once: the stream's <c>ConsumerInbox</c> (its
/// pull-request subscription) must be in place by then, not made by the kick the API sends after the reply, or the
/// request is lost and the client waits for its batch until it gives up (the harness's <c>js-ordered-128</c> smoke row,
/// an ephemeral ack-none consumer made on a fresh stream and read with batches of 1,000, stalled so in 3 of ~27 runs).
/// </summary>
public sealed class DeliveryWakeupTests
{
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
}
