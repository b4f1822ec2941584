using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;
using Broker.JetStream.Tests.Streams;

namespace Broker.JetStream.Tests.Api;

/// <summary>nats-server's addConsumer decisions on a memory stream: create, re-create, update, limits, work-queue rules.</summary>
public sealed class ConsumerCreatorTests : IAsyncLifetime
{
    private readonly TempDirectory directory = new("js-creator-");
    private readonly ConsumerCreator creator = new(new JetStreamOptions(), null);
    private readonly List<MessageStream> streams = [];
    private TestBroker broker = null!;

    public async Task InitializeAsync() => broker = await TestBroker.StartAsync();

    public async Task DisposeAsync()
    {
        foreach (var stream in streams)
        {
            await stream.StopAsync(deleteData: true);
        }

        await broker.DisposeAsync();
        directory.Dispose();
    }

    private async Task<MessageStream> StreamAsync(string name, RetentionPolicy retention = RetentionPolicy.Limits, int maxConsumers = -1)
    {
        var config = StreamValidation.Normalize(new StreamConfig { Name = name, Subjects = [name.ToLowerInvariant() + ".>"], Storage = "memory", Retention = retention, MaxConsumers = maxConsumers }, 120_000_000_000);
        var (_, stream) = await StreamTestKit.StreamAsync(broker, Path.Combine(directory.Path, name), config);
        streams.Add(stream);
        return stream;
    }

    private static ConsumerConfig Durable(string name, string? filter = null, ConsumerAckPolicy ack = ConsumerAckPolicy.Explicit) =>
        new() { Durable = name, AckPolicy = ack, FilterSubject = filter };

    private static ApiError Refusal(Action add) => Assert.Throws<ApiException>(add).Error;

    [Fact(Timeout = 30_000)]
    public async Task A_durable_is_created_registered_and_created_again_unchanged()
    {
        var stream = await StreamAsync("A");

        var first = creator.Add(stream, Durable("d"), ConsumerAction.Create, out _);
        var again = creator.Add(stream, Durable("d"), ConsumerAction.CreateOrUpdate, out _);

        Assert.Same(first, again);
        Assert.Same(first, stream.FindConsumer("d"));
        Assert.Equal(ApiErrors.ConsumerExists, Refusal(() => creator.Add(stream, Durable("d", "a.x"), ConsumerAction.Create, out _)));
        Assert.Equal(ApiErrors.ConsumerDoesNotExist, Refusal(() => creator.Add(stream, Durable("e"), ConsumerAction.Update, out _)));
        Assert.Equal(ApiErrors.ConsumerBadDurableName, Refusal(() => creator.Add(stream, new ConsumerConfig { Name = "a.b", AckPolicy = ConsumerAckPolicy.Explicit }, ConsumerAction.Create, out _)));
    }

    [Fact(Timeout = 30_000)]
    public async Task An_ephemeral_gets_a_generated_name_and_the_default_inactive_threshold()
    {
        var stream = await StreamAsync("E");

        var consumer = creator.Add(stream, new ConsumerConfig { AckPolicy = ConsumerAckPolicy.Explicit }, ConsumerAction.CreateOrUpdate, out _);

        Assert.False(string.IsNullOrEmpty(consumer.Name));
        Assert.Equal(consumer.Name, consumer.Config.Name);
        Assert.Equal(5_000_000_000, consumer.Config.InactiveThreshold);
    }

    [Fact(Timeout = 30_000)]
    public async Task The_streams_consumer_limit_is_kept()
    {
        var stream = await StreamAsync("L", maxConsumers: 1);
        creator.Add(stream, Durable("one"), ConsumerAction.Create, out _);

        Assert.Equal(ApiErrors.MaximumConsumersLimit, Refusal(() => creator.Add(stream, Durable("two"), ConsumerAction.Create, out _)));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_work_queue_wants_explicit_acks_and_consumers_that_do_not_overlap()
    {
        var stream = await StreamAsync("W", RetentionPolicy.WorkQueue);

        Assert.Equal(ApiErrors.ConsumerWorkQueueRequiresExplicitAck, Refusal(() => creator.Add(stream, Durable("n", ack: ConsumerAckPolicy.All), ConsumerAction.Create, out _)));
        creator.Add(stream, Durable("a", "w.a.>"), ConsumerAction.Create, out _);
        Assert.Equal(ApiErrors.ConsumerWorkQueueMultipleUnfiltered, Refusal(() => creator.Add(stream, Durable("all"), ConsumerAction.Create, out _)));
        Assert.Equal(ApiErrors.ConsumerWorkQueueNotUnique, Refusal(() => creator.Add(stream, Durable("sub", "w.a.b"), ConsumerAction.Create, out _)));
        creator.Add(stream, Durable("b", "w.b.>"), ConsumerAction.Create, out _);

        Assert.Equal(["a", "b"], stream.ConsumersByName().Select(c => c.Name));
    }
}
