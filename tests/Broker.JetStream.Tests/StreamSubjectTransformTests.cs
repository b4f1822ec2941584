using System.Globalization;
using Broker.Storage.FileStore;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// A stream's <c>subject_transform</c> (nats-server 2.10) through NATS.Client.JetStream. nats-server 2.9.10 does not have
/// it (it drops the field and stores the subject as published, shown by the last test), so these follow 2.10.0's
/// <c>stream.go</c> and its <c>TestJetStreamInputTransform</c>: a message taken in on a subject within the source is
/// stored, acknowledged, filtered, got and republished under the transformed subject; others are stored as published;
/// a transform that does not compile is refused as 2.10.0's <c>addStream</c> and <c>update</c> refuse it.
/// </summary>
public sealed class StreamSubjectTransformTests
{
    private static StreamConfig Memory(string name, params string[] subjects) => new(name, subjects) { Storage = StreamConfigStorage.Memory };

    [Fact(Timeout = 30_000)]
    public async Task Messages_are_stored_under_the_transformed_subject()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        var stream = await js.CreateStreamAsync(Memory("T1", "foo", "orders.*.*") with
        {
            SubjectTransform = new SubjectTransform { Src = "orders.*.*", Dest = "by.$2.{{wildcard(1)}}" },
        });
        Assert.Equal(("orders.*.*", "by.$2.{{wildcard(1)}}"), (stream.Info.Config.SubjectTransform?.Src, stream.Info.Config.SubjectTransform?.Dest));

        (await js.PublishAsync("foo", "as published")).EnsureSuccess();
        var ack = await js.PublishAsync("orders.eu.42", "transformed");
        ack.EnsureSuccess();
        Assert.Equal(("T1", 2ul), (ack.Stream, ack.Seq));

        Assert.Equal("foo", (await stream.GetAsync(new StreamMsgGetRequest { Seq = 1 })).Message.Subject);
        Assert.Equal("by.42.eu", (await stream.GetAsync(new StreamMsgGetRequest { Seq = 2 })).Message.Subject);
        Assert.Equal(2ul, (await stream.GetAsync(new StreamMsgGetRequest { LastBySubj = "by.42.eu" })).Message.Seq);

        // A filter on the stored subjects, outside the stream's own (2.10 checks no consumer filter against them).
        var consumer = await js.CreateOrUpdateConsumerAsync("T1", new ConsumerConfig("C") { FilterSubject = "by.>", AckPolicy = ConsumerConfigAckPolicy.None });
        var next = await consumer.NextAsync<string>(opts: new NatsJSNextOpts { Expires = TimeSpan.FromSeconds(2) });
        Assert.Equal(("by.42.eu", "transformed"), (next?.Subject, next?.Data));

        // Expected-last-subject-sequence and the per-subject limits count the stored subject.
        var headers = new NatsHeaders { ["Nats-Expected-Last-Subject-Sequence"] = "2" };
        (await js.PublishAsync("orders.eu.42", "again", headers: headers)).EnsureSuccess();
        var wrong = await js.PublishAsync("orders.eu.42", "stale", headers: headers);
        Assert.Equal(10071, wrong.Error?.ErrCode);
    }

    [Fact(Timeout = 30_000)]
    public async Task The_transform_applies_before_republish_and_may_change_on_update()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("T2", "in.>") with
        {
            SubjectTransform = new SubjectTransform { Src = ">", Dest = "stored.>" },
            Republish = new Republish { Src = "", Dest = "out.>" },
        });
        await using var copies = await connection.SubscribeCoreAsync<string>("out.>");
        await connection.PingAsync();

        (await js.PublishAsync("in.a", "one")).EnsureSuccess();
        var copy = await copies.NextAsync();
        Assert.Equal(("out.stored.in.a", "stored.in.a"), (copy.Subject, copy.Headers?["Nats-Subject"].ToString()));

        // Changed, then removed: later messages are stored accordingly, earlier ones keep their subject.
        var updated = await js.UpdateStreamAsync(Memory("T2", "in.>") with
        {
            SubjectTransform = new SubjectTransform { Src = "in.*", Dest = "stored.in.x.$1" },
            Republish = new Republish { Src = "", Dest = "out.>" },
        });
        Assert.Equal("stored.in.x.$1", updated.Info.Config.SubjectTransform?.Dest);
        (await js.PublishAsync("in.b", "two")).EnsureSuccess();
        Assert.Equal("out.stored.in.x.b", (await copies.NextAsync()).Subject);
        var removed = await js.UpdateStreamAsync(Memory("T2", "in.>") with { Republish = new Republish { Src = "", Dest = "out.>" } });
        Assert.Null(removed.Info.Config.SubjectTransform);
        (await js.PublishAsync("in.c", "three")).EnsureSuccess();
        Assert.Equal("out.in.c", (await copies.NextAsync()).Subject);

        var subjects = new List<string>();
        var stream = await js.GetStreamAsync("T2");
        for (var seq = 1ul; seq <= 3; seq++)
        {
            subjects.Add((await stream.GetAsync(new StreamMsgGetRequest { Seq = seq })).Message.Subject);
        }

        Assert.Equal(["stored.in.a", "stored.in.x.b", "in.c"], subjects);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_transform_that_does_not_compile_is_refused_as_2_10_refuses_it()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;

        var create = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateStreamAsync(Memory("BAD", "bad.*") with
        {
            SubjectTransform = new SubjectTransform { Src = "bad.*", Dest = "x.$2" },
        }));
        Assert.Equal((500, 10049, "stream subject transform from 'bad.*' to 'x.$2': invalid mapping destination: wildcard index out of range in $2: [2]"), (create.Error.Code, create.Error.ErrCode, create.Error.Description));

        await js.CreateStreamAsync(Memory("OK", "ok.*"));
        var update = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.UpdateStreamAsync(Memory("OK", "ok.*") with
        {
            SubjectTransform = new SubjectTransform { Src = "ok.>", Dest = "x.*" },
        }));
        Assert.Equal((500, 10069, "stream configuration for subject transform from 'ok.>' to 'x.*': invalid subject"), (update.Error.Code, update.Error.ErrCode, update.Error.Description));

        // A republish of stored subjects outside the stream's own: refused as 2.9.10 refuses it without a transform,
        // taken with one (2.10 dropped that check).
        var republish = new Republish { Src = "st.>", Dest = "o.>" };
        var subset = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateStreamAsync(Memory("RS", "rs.*") with { Republish = republish }));
        Assert.Equal("stream configuration for republish source is not valid subset of subjects", subset.Error.Description);
        await js.CreateStreamAsync(Memory("RS", "rs.*") with { Republish = republish, SubjectTransform = new SubjectTransform { Src = ">", Dest = "st.>" } });

        // An empty destination transforms nothing, as 2.10.0's NewSubjectTransform makes no transform of it.
        var kept = await js.UpdateStreamAsync(Memory("OK", "ok.*") with { SubjectTransform = new SubjectTransform { Src = "ok.*", Dest = "" } });
        Assert.Equal("ok.*", kept.Info.Config.SubjectTransform?.Src);
        (await js.PublishAsync("ok.1", "x")).EnsureSuccess();
        Assert.Equal("ok.1", (await kept.GetAsync(new StreamMsgGetRequest { Seq = 1 })).Message.Subject);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_file_stream_keeps_its_transform_and_republish_across_a_restart()
    {
        using var store = new TempDirectory("js-transform-");
        var config = new StreamConfig("F", ["f.>"])
        {
            Storage = StreamConfigStorage.File,
            SubjectTransform = new SubjectTransform { Src = "f.*", Dest = "kept.$1" },
            Republish = new Republish { Src = "", Dest = "copy.>" },
        };
        for (var run = 1; run <= 2; run++)
        {
            await using var broker = await TestBroker.StartAsync(plugins: [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = store.Path }), new FileStorePlugin(new FileStoreOptions())]);
            await using var connection = await NatsClients.ConnectAsync(broker.Url);
            var js = new NatsJSContext(connection);
            if (run == 1)
            {
                await js.CreateStreamAsync(config);
            }

            await using var copies = await connection.SubscribeCoreAsync<string>("copy.>");
            await connection.PingAsync();
            (await js.PublishAsync("f.x", $"run {run}")).EnsureSuccess();
            var copy = await copies.NextAsync();
            Assert.Equal(("copy.kept.x", $"run {run}"), (copy.Subject, copy.Data));
            Assert.Equal((run.ToString(CultureInfo.InvariantCulture), (run - 1).ToString(CultureInfo.InvariantCulture)), (copy.Headers?["Nats-Sequence"].ToString(), copy.Headers?["Nats-Last-Sequence"].ToString()));
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task Nats_server_2_9_10_drops_the_field_and_stores_the_subject_as_published()
    {
        await using var server = await JetStreamServer.StartAsync(ServerKind.Reference);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        var stream = await js.CreateStreamAsync(Memory("T1", "foo") with { SubjectTransform = new SubjectTransform { Src = ">", Dest = "transformed.>" } });
        Assert.Null(stream.Info.Config.SubjectTransform);
        (await js.PublishAsync("foo", "OK")).EnsureSuccess();
        Assert.Equal("foo", (await stream.GetAsync(new StreamMsgGetRequest { Seq = 1 })).Message.Subject);
    }
}
