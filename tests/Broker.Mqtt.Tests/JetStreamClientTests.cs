using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.JetStream;
using Broker.JetStream;
using Broker.Storage.MemStore;
using Broker.TestKit;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Broker.Mqtt.Tests;

/// <summary>The adapter's JetStream API client against the in-process engine (memory store), checked with NATS.Client.JetStream.</summary>
public sealed class JetStreamClientTests
{
    private static readonly StreamSpec Spec = new("T_RET", ["t.ret.>"], StreamRetention.Limits, 1, StreamStorage.Memory);

    [Fact(Timeout = 30_000)]
    public async Task Availability_follows_the_engine()
    {
        await using (var plain = await TestBroker.StartAsync())
        await using (var api = new JetStreamClient(plain.Bus.CreateClient(), TimeSpan.FromSeconds(2), ownsClient: true))
        {
            Assert.False(await api.IsAvailableAsync(CancellationToken.None));
        }

        await using var broker = await StartAsync();
        await using var js = new JetStreamClient(broker.Bus.CreateClient(), ownsClient: true);
        Assert.True(await js.IsAvailableAsync(CancellationToken.None));
        Assert.NotEqual(0, (await js.AccountLimitsAsync(CancellationToken.None)).MaxStorage);
    }

    [Fact(Timeout = 30_000)]
    public async Task Ensure_stream_creates_accepts_and_updates_what_it_sets()
    {
        await using var broker = await StartAsync();
        await using var api = new JetStreamClient(broker.Bus.CreateClient(), ownsClient: true);
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var js = new NatsJSContext(nats);

        await api.EnsureStreamAsync(Spec, CancellationToken.None);
        await api.EnsureStreamAsync(Spec, CancellationToken.None);
        var info = (await js.GetStreamAsync("T_RET")).Info;
        Assert.Equal(["t.ret.>"], info.Config.Subjects);
        Assert.Equal(1, info.Config.MaxMsgsPerSubject);
        Assert.Equal(NATS.Client.JetStream.Models.StreamConfigStorage.Memory, info.Config.Storage);

        // An operator's own setting survives the update of what the adapter sets.
        await js.UpdateStreamAsync(info.Config with { MaxMsgsPerSubject = 5, MaxAge = TimeSpan.FromHours(1) });
        await api.EnsureStreamAsync(Spec, CancellationToken.None);
        info = (await js.GetStreamAsync("T_RET")).Info;
        Assert.Equal(1, info.Config.MaxMsgsPerSubject);
        Assert.Equal(TimeSpan.FromHours(1), info.Config.MaxAge);

        // No file store plugin here: the error says so, with the engine's code.
        var error = await Assert.ThrowsAsync<JetStreamApiException>(() => api.EnsureStreamAsync(Spec with { Name = "T_FILE", Subjects = ["t.file.>"], Storage = StreamStorage.File }, CancellationToken.None));
        Assert.Equal(JetStreamApiException.StreamCreate, error.ErrorCode);
        Assert.Contains("file", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task Publish_get_read_and_purge()
    {
        await using var broker = await StartAsync();
        await using var api = new JetStreamClient(broker.Bus.CreateClient(), ownsClient: true);
        await api.EnsureStreamAsync(Spec, CancellationToken.None);

        var headers = "NATS/1.0\r\nA: b\r\n\r\n"u8.ToArray();
        Assert.Equal(1UL, await api.PublishAsync("t.ret.a", headers, "one"u8.ToArray(), CancellationToken.None));
        Assert.Equal(2UL, await api.PublishAsync("t.ret.b", default, "two"u8.ToArray(), CancellationToken.None));
        Assert.Equal(3UL, await api.PublishAsync("t.ret.a", headers, "three"u8.ToArray(), CancellationToken.None));

        var last = await api.GetLastBySubjectAsync("T_RET", "t.ret.a", CancellationToken.None);
        Assert.NotNull(last);
        Assert.Equal((3UL, "t.ret.a", "three"), (last.Sequence, last.Subject, Encoding.UTF8.GetString(last.Data)));
        Assert.Equal(headers, last.Headers);
        Assert.Null(await api.GetLastBySubjectAsync("T_RET", "t.ret.none", CancellationToken.None));

        var all = (await api.ReadAllAsync("T_RET", "t.ret.>", CancellationToken.None))
            .Select(message => $"{message.Sequence}:{message.Subject}:{Encoding.UTF8.GetString(message.Data)}:{message.Headers.Length}").ToList();

        // max_msgs_per_subject 1: the first message of t.ret.a was replaced.
        Assert.Equal(["2:t.ret.b:two:0", $"3:t.ret.a:three:{headers.Length}"], all);
        Assert.Empty(await api.ReadAllAsync("T_RET", "t.ret.none.>", CancellationToken.None));

        await api.PurgeSubjectAsync("T_RET", "t.ret.a", CancellationToken.None);
        Assert.Null(await api.GetLastBySubjectAsync("T_RET", "t.ret.a", CancellationToken.None));
        Assert.NotNull(await api.GetLastBySubjectAsync("T_RET", "t.ret.b", CancellationToken.None));
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        Assert.Equal(1L, (await new NatsJSContext(nats).GetStreamAsync("T_RET")).Info.State.Messages);

        var noStream = await Assert.ThrowsAsync<JetStreamApiException>(() => api.PublishAsync("nowhere.x", default, "x"u8.ToArray(), CancellationToken.None));
        Assert.Equal(503, noStream.Code);
        var missing = await Assert.ThrowsAsync<JetStreamApiException>(() => api.GetLastBySubjectAsync("NOPE", "t.ret.a", CancellationToken.None));
        Assert.Equal(JetStreamApiException.StreamNotFound, missing.ErrorCode);
    }

    [Fact(Timeout = 60_000)]
    public async Task Read_all_crosses_batches_and_leaves_no_consumer()
    {
        await using var broker = await StartAsync();
        await using var api = new JetStreamClient(broker.Bus.CreateClient(), ownsClient: true);
        await api.EnsureStreamAsync(new StreamSpec("T_MANY", ["t.many.>"], StreamRetention.Limits, -1, StreamStorage.Memory), CancellationToken.None);
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var js = new NatsJSContext(nats);
        const int count = 2_500;
        for (var i = 0; i < count; i++)
        {
            (await js.PublishAsync($"t.many.{i % 7}", Encoding.UTF8.GetBytes(i.ToString(System.Globalization.CultureInfo.InvariantCulture)))).EnsureSuccess();
        }

        var all = await api.ReadAllAsync("T_MANY", null, CancellationToken.None);
        Assert.Equal(Enumerable.Range(1, count).Select(i => (ulong)i), all.Select(m => m.Sequence));
        Assert.Equal(Enumerable.Range(0, count).Select(i => $"t.many.{i % 7}:{i}"), all.Select(m => $"{m.Subject}:{Encoding.UTF8.GetString(m.Data)}"));
        Assert.Equal(0, (await js.GetStreamAsync("T_MANY")).Info.State.ConsumerCount);
    }

    [Fact(Timeout = 30_000)]
    public async Task Durable_push_consumer_delivers_and_is_deleted()
    {
        await using var broker = await StartAsync();
        await using var api = new JetStreamClient(broker.Bus.CreateClient(), ownsClient: true);
        await api.EnsureStreamAsync(new StreamSpec("T_MSGS", ["t.msgs.>"], StreamRetention.Interest, -1, StreamStorage.Memory), CancellationToken.None);
        var spec = new ConsumerSpec("c1", "t.msgs.x", "deliver.c1", TimeSpan.FromSeconds(30), 100, ConsumerDeliverPolicy.New);
        await using var receiver = broker.Bus.CreateClient();
        var delivered = new TaskCompletionSource<(string Payload, string Reply)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var subscription = receiver.Subscribe("deliver.c1", null, (in BusMessage message) =>
            delivered.TrySetResult((Encoding.UTF8.GetString(message.Payload.ToArray()), Encoding.UTF8.GetString(message.ReplyTo))));
        await api.CreateConsumerAsync("T_MSGS", spec, CancellationToken.None);
        await api.CreateConsumerAsync("T_MSGS", spec, CancellationToken.None);

        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var js = new NatsJSContext(nats);
        var consumer = await js.GetConsumerAsync("T_MSGS", "c1");
        Assert.Equal(NATS.Client.JetStream.Models.ConsumerConfigAckPolicy.Explicit, consumer.Info.Config.AckPolicy);
        Assert.Equal(TimeSpan.FromSeconds(30), consumer.Info.Config.AckWait);
        Assert.Equal(100, consumer.Info.Config.MaxAckPending);
        Assert.Equal("t.msgs.x", consumer.Info.Config.FilterSubject);

        await api.PublishAsync("t.msgs.x", default, "hello"u8.ToArray(), CancellationToken.None);
        var (payload, reply) = await delivered.Task.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.Equal("hello", payload);
        Assert.StartsWith("$JS.ACK.T_MSGS.c1.", reply, StringComparison.Ordinal);

        await api.DeleteConsumerAsync("T_MSGS", "c1", CancellationToken.None);
        await api.DeleteConsumerAsync("T_MSGS", "c1", CancellationToken.None);
        await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.GetConsumerAsync("T_MSGS", "c1"));
    }

    // The create's task carries the API's error (one async method between the request and the caller since issue 25's cut).
    [Fact(Timeout = 30_000)]
    public async Task A_refused_consumer_create_throws_the_api_error()
    {
        await using var broker = await StartAsync();
        await using var api = new JetStreamClient(broker.Bus.CreateClient(), ownsClient: true);
        var spec = new ConsumerSpec("c1", "t.none.x", "deliver.c1", TimeSpan.FromSeconds(30), 100, ConsumerDeliverPolicy.New);

        var error = await Assert.ThrowsAsync<JetStreamApiException>(() => api.CreateConsumerAsync("T_NONE", spec, CancellationToken.None));
        Assert.Equal(404, error.Code);
        Assert.Equal(10059, error.ErrorCode);
        Assert.Equal("$JS.API.CONSUMER.DURABLE.CREATE.T_NONE.c1", error.Subject);

        await api.EnsureStreamAsync(new StreamSpec("T_NONE", ["t.none.>"], StreamRetention.Interest, -1, StreamStorage.Memory), CancellationToken.None);
        await api.CreateConsumerAsync("T_NONE", spec, CancellationToken.None);
        var invalid = await Assert.ThrowsAsync<JetStreamApiException>(() => api.CreateConsumerAsync("T_NONE", spec with { DurableName = "c2", FilterSubject = "elsewhere.x" }, CancellationToken.None));
        Assert.Equal(400, invalid.Code);
    }

    private static Task<TestBroker> StartAsync() =>
        TestBroker.StartAsync(plugins: [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = Path.Combine(Path.GetTempPath(), "mqtt-js-" + Guid.NewGuid().ToString("N")) }), new MemoryStorePlugin()]);
}
