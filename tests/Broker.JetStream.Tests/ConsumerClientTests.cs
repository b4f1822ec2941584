using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>Consumers through NATS.Client.JetStream 3.3.2: pull fetch and consume, acks, redelivery, policies, ordered.</summary>
public class ConsumerClientTests
{
    private static StreamConfig Memory(string name, params string[] subjects) => new(name, subjects) { Storage = StreamConfigStorage.Memory };

    private static async Task<(JetStreamServer Server, NatsConnection Connection, NatsJSContext Js)> StartAsync(string stream = "S", int messages = 0, params string[] subjects)
    {
        var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await js.CreateStreamAsync(Memory(stream, subjects.Length == 0 ? ["s.>"] : subjects));
        for (var i = 1; i <= messages; i++)
        {
            (await js.PublishAsync(subjects.Length == 0 ? "s.x" : subjects[0].Replace(">", "x", StringComparison.Ordinal).Replace("*", "x", StringComparison.Ordinal), $"m{i}")).EnsureSuccess();
        }

        return (server, connection, js);
    }

    private static async Task<List<INatsJSMsg<string>>> FetchAsync(INatsJSConsumer consumer, int max, TimeSpan? expires = null)
    {
        var list = new List<INatsJSMsg<string>>();
        await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = max, Expires = expires ?? TimeSpan.FromSeconds(2) }))
        {
            list.Add(msg);
        }

        return list;
    }

    [Fact(Timeout = 30_000)]
    public async Task Durable_pull_fetch_with_explicit_acks_delivers_in_order_and_tracks_the_ack_floor()
    {
        var (server, connection, js) = await StartAsync(messages: 10);
        await using var _ = server;
        await using var __ = connection;

        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C1") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        var first = await FetchAsync(consumer, 4);
        Assert.Equal(["m1", "m2", "m3", "m4"], first.Select(m => m.Data));
        Assert.Equal("s.x", first[0].Subject);
        Assert.Equal(1UL, first[0].Metadata!.Value.Sequence.Stream);
        Assert.Equal(1UL, first[0].Metadata!.Value.Sequence.Consumer);
        Assert.Equal(9UL, first[0].Metadata!.Value.NumPending);
        Assert.Equal("S", first[0].Metadata!.Value.Stream);
        Assert.Equal("C1", first[0].Metadata!.Value.Consumer);

        foreach (var msg in first)
        {
            await msg.AckAsync();
        }

        var second = await FetchAsync(consumer, 10);
        Assert.Equal(6, second.Count);
        Assert.Equal("m5", second[0].Data);
        await second[1].AckAsync(new AckOpts { DoubleAck = true });

        await consumer.RefreshAsync();
        Assert.Equal(4UL, consumer.Info.AckFloor.StreamSeq);
        Assert.Equal(10UL, consumer.Info.Delivered.StreamSeq);
        Assert.Equal(5L, consumer.Info.NumAckPending);
        Assert.Equal(0UL, consumer.Info.NumPending);
    }

    [Fact(Timeout = 30_000)]
    public async Task Fetch_with_no_wait_ends_at_once_when_nothing_is_pending()
    {
        var (server, connection, js) = await StartAsync(messages: 2);
        await using var _ = server;
        await using var __ = connection;
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit });

        var got = new List<string?>();
        await foreach (var msg in consumer.FetchNoWaitAsync<string>(new NatsJSFetchOpts { MaxMsgs = 10 }))
        {
            got.Add(msg.Data);
            await msg.AckAsync();
        }

        Assert.Equal(["m1", "m2"], got);
        var none = new List<string?>();
        var started = DateTime.UtcNow;
        await foreach (var msg in consumer.FetchNoWaitAsync<string>(new NatsJSFetchOpts { MaxMsgs = 10 }))
        {
            none.Add(msg.Data);
        }

        Assert.Empty(none);
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(2), "a no-wait fetch of nothing returns at once (404)");
    }

    [Fact(Timeout = 30_000)]
    public async Task Consume_delivers_messages_published_after_it_starts()
    {
        var (server, connection, js) = await StartAsync(messages: 3);
        await using var _ = server;
        await using var __ = connection;
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit });

        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var received = new List<string?>();
        var publisher = Task.Run(async () =>
        {
            await Task.Delay(200);
            for (var i = 4; i <= 50; i++)
            {
                await js.PublishAsync("s.x", $"m{i}");
            }
        });

        await foreach (var msg in consumer.ConsumeAsync<string>(opts: new NatsJSConsumeOpts { MaxMsgs = 20 }, cancellationToken: cts.Token))
        {
            received.Add(msg.Data);
            await msg.AckAsync();
            if (received.Count == 50)
            {
                break;
            }
        }

        await publisher;
        Assert.Equal(Enumerable.Range(1, 50).Select(i => $"m{i}"), received);
    }

    [Fact(Timeout = 30_000)]
    public async Task Unacknowledged_messages_are_redelivered_after_ack_wait_up_to_max_deliver()
    {
        var (server, connection, js) = await StartAsync(messages: 1);
        await using var _ = server;
        await using var __ = connection;
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C")
        {
            AckPolicy = ConsumerConfigAckPolicy.Explicit,
            AckWait = TimeSpan.FromMilliseconds(300),
            MaxDeliver = 2,
        });

        var first = Assert.Single(await FetchAsync(consumer, 1));
        Assert.Equal(1UL, first.Metadata!.Value.NumDelivered);
        var second = Assert.Single(await FetchAsync(consumer, 1, TimeSpan.FromSeconds(3)));
        Assert.Equal("m1", second.Data);
        Assert.Equal(2UL, second.Metadata!.Value.NumDelivered);
        Assert.Equal(2UL, second.Metadata!.Value.Sequence.Consumer);

        // max_deliver 2: no third delivery.
        Assert.Empty(await FetchAsync(consumer, 1, TimeSpan.FromSeconds(1)));
        await consumer.RefreshAsync();
        Assert.Equal(0L, consumer.Info.NumAckPending);
    }

    [Fact(Timeout = 30_000)]
    public async Task Nak_redelivers_now_or_after_a_delay_and_term_stops_redelivery()
    {
        var (server, connection, js) = await StartAsync(messages: 2);
        await using var _ = server;
        await using var __ = connection;
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit, AckWait = TimeSpan.FromSeconds(30) });

        var batch = await FetchAsync(consumer, 2);
        await batch[0].NakAsync();
        await batch[1].NakAsync(delay: TimeSpan.FromMilliseconds(1100));

        var started = DateTime.UtcNow;
        var redelivered = await FetchAsync(consumer, 1);
        Assert.Equal("m1", Assert.Single(redelivered).Data);
        await redelivered[0].AckTerminateAsync();

        var delayed = await FetchAsync(consumer, 1, TimeSpan.FromSeconds(5));
        Assert.Equal("m2", Assert.Single(delayed).Data);
        Assert.True(DateTime.UtcNow - started >= TimeSpan.FromMilliseconds(400), "the NAK delay was honoured");
        await delayed[0].AckProgressAsync();
        // Acks and API requests reach the engine through different internal clients (as in nats-server), so only
        // a double ack orders the ack before the consumer info that follows.
        await delayed[0].AckAsync(new AckOpts { DoubleAck = true });

        await consumer.RefreshAsync();
        Assert.Equal(0L, consumer.Info.NumAckPending);
        Assert.Equal(2UL, consumer.Info.AckFloor.StreamSeq);
    }

    [Fact(Timeout = 30_000)]
    public async Task Max_ack_pending_holds_back_deliveries_until_acks_arrive()
    {
        var (server, connection, js) = await StartAsync(messages: 5);
        await using var _ = server;
        await using var __ = connection;
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit, MaxAckPending = 2 });

        var first = await FetchAsync(consumer, 5, TimeSpan.FromMilliseconds(1100));
        Assert.Equal(2, first.Count);
        await first[0].AckAsync();
        var second = await FetchAsync(consumer, 5, TimeSpan.FromMilliseconds(1100));
        Assert.Equal(["m3"], second.Select(m => m.Data));
    }

    [Fact(Timeout = 30_000)]
    public async Task Ack_all_acknowledges_earlier_deliveries()
    {
        var (server, connection, js) = await StartAsync(messages: 5);
        await using var _ = server;
        await using var __ = connection;
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.All });
        var batch = await FetchAsync(consumer, 5);
        await batch[3].AckAsync(new AckOpts { DoubleAck = true });
        await consumer.RefreshAsync();
        Assert.Equal(4UL, consumer.Info.AckFloor.StreamSeq);
        Assert.Equal(1L, consumer.Info.NumAckPending);
    }

    [Theory(Timeout = 30_000)]
    [InlineData(ConsumerConfigDeliverPolicy.All, 1)]
    [InlineData(ConsumerConfigDeliverPolicy.Last, 6)]
    [InlineData(ConsumerConfigDeliverPolicy.New, 7)]
    public async Task Deliver_policies_choose_where_a_consumer_starts(ConsumerConfigDeliverPolicy policy, int firstIndex)
    {
        var (server, connection, js) = await StartAsync(messages: 6);
        await using var _ = server;
        await using var __ = connection;
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.None, DeliverPolicy = policy });
        await js.PublishAsync("s.x", "m7");
        var got = await FetchAsync(consumer, 1);
        Assert.Equal($"m{firstIndex}", Assert.Single(got).Data);
    }

    [Fact(Timeout = 30_000)]
    public async Task By_start_sequence_by_start_time_and_last_per_subject()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("S", "s.>"));
        await js.PublishAsync("s.a", "a1");
        await js.PublishAsync("s.b", "b1");
        await Task.Delay(20);
        var middle = DateTime.UtcNow;
        await Task.Delay(20);
        await js.PublishAsync("s.a", "a2");
        await js.PublishAsync("s.b", "b2");

        var bySeq = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("SEQ") { AckPolicy = ConsumerConfigAckPolicy.None, DeliverPolicy = ConsumerConfigDeliverPolicy.ByStartSequence, OptStartSeq = 2 });
        Assert.Equal(["b1", "a2", "b2"], (await FetchAsync(bySeq, 3)).Select(m => m.Data));

        var byTime = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("TIME") { AckPolicy = ConsumerConfigAckPolicy.None, DeliverPolicy = ConsumerConfigDeliverPolicy.ByStartTime, OptStartTime = middle });
        Assert.Equal(["a2", "b2"], (await FetchAsync(byTime, 2)).Select(m => m.Data));

        var lastPer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("LAST") { AckPolicy = ConsumerConfigAckPolicy.None, DeliverPolicy = ConsumerConfigDeliverPolicy.LastPerSubject, FilterSubject = "s.>" });
        Assert.Equal(["a2", "b2"], (await FetchAsync(lastPer, 2)).Select(m => m.Data));
    }

    [Fact(Timeout = 30_000)]
    public async Task Filter_subjects_select_messages()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("S", "s.>"));
        foreach (var subject in new[] { "s.a", "s.b", "s.c", "s.a", "s.c" })
        {
            await js.PublishAsync(subject, subject);
        }

        var single = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("A") { AckPolicy = ConsumerConfigAckPolicy.Explicit, FilterSubject = "s.a" });
        Assert.Equal(2UL, single.Info.NumPending);
        Assert.Equal([1UL, 4UL], (await FetchAsync(single, 5, TimeSpan.FromMilliseconds(1100))).Select(m => m.Metadata!.Value.Sequence.Stream));

        var multi = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("AC") { AckPolicy = ConsumerConfigAckPolicy.Explicit, FilterSubjects = ["s.a", "s.c"] });
        Assert.Equal([1UL, 3UL, 4UL, 5UL], (await FetchAsync(multi, 5, TimeSpan.FromMilliseconds(1100))).Select(m => m.Metadata!.Value.Sequence.Stream));

        var notSubset = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
            await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("BAD") { AckPolicy = ConsumerConfigAckPolicy.Explicit, FilterSubject = "other.>" }));
        Assert.Equal(10093, notSubset.Error.ErrCode);
    }

    [Fact(Timeout = 30_000)]
    public async Task Ordered_consumer_reads_the_whole_stream()
    {
        var (server, connection, js) = await StartAsync(messages: 500);
        await using var _ = server;
        await using var __ = connection;
        var ordered = await js.CreateOrderedConsumerAsync("S");
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var count = 0;
        ulong last = 0;
        await foreach (var msg in ordered.ConsumeAsync<string>(cancellationToken: cts.Token))
        {
            count++;
            Assert.Equal(last + 1, msg.Metadata!.Value.Sequence.Stream);
            last = msg.Metadata!.Value.Sequence.Stream;
            if (count == 500)
            {
                break;
            }
        }

        Assert.Equal(500, count);
    }

    [Fact(Timeout = 30_000)]
    public async Task Consumer_names_list_info_and_delete()
    {
        var (server, connection, js) = await StartAsync(messages: 3);
        await using var _ = server;
        await using var __ = connection;
        await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("B") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("A") { AckPolicy = ConsumerConfigAckPolicy.Explicit, Description = "first" });

        var names = new List<string>();
        await foreach (var name in js.ListConsumerNamesAsync("S"))
        {
            names.Add(name);
        }

        Assert.Equal(["A", "B"], names);
        var infos = new List<ConsumerInfo>();
        await foreach (var info in js.ListConsumersAsync("S"))
        {
            infos.Add(info.Info);
        }

        Assert.Equal(3UL, infos[0].NumPending);
        Assert.Equal("first", infos[0].Config.Description);

        Assert.True(await js.DeleteConsumerAsync("S", "A"));
        var missing = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.GetConsumerAsync("S", "A"));
        Assert.Equal(10014, missing.Error.ErrCode);
        var stream = await js.GetStreamAsync("S");
        Assert.Equal(1L, stream.Info.State.ConsumerCount);
    }

    [Fact(Timeout = 30_000)]
    public async Task Updating_a_consumer_keeps_its_position_and_refuses_immutable_changes()
    {
        var (server, connection, js) = await StartAsync(messages: 3);
        await using var _ = server;
        await using var __ = connection;
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        foreach (var msg in await FetchAsync(consumer, 2))
        {
            await msg.AckAsync(new AckOpts { DoubleAck = true });
        }

        var updated = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit, MaxAckPending = 10, Description = "now" });
        Assert.Equal(10L, updated.Info.Config.MaxAckPending);
        Assert.Equal(2UL, updated.Info.AckFloor.StreamSeq);

        var refused = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
            await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.None }));
        Assert.Equal(10012, refused.Error.ErrCode);
        Assert.Equal("ack policy can not be updated", refused.Error.Description);
    }

    [Fact(Timeout = 30_000)]
    public async Task Work_queue_streams_remove_acknowledged_messages_and_check_their_consumers()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("WQ", "wq.>") with { Retention = StreamConfigRetention.Workqueue });
        for (var i = 0; i < 4; i++)
        {
            await js.PublishAsync("wq.a", i);
        }

        var worker = await js.CreateOrUpdateConsumerAsync("WQ", new ConsumerConfig("W") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        var batch = new List<INatsJSMsg<int>>();
        await foreach (var msg in worker.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 4, Expires = TimeSpan.FromSeconds(2) }))
        {
            batch.Add(msg);
        }

        await batch[0].AckAsync(new AckOpts { DoubleAck = true });
        await batch[1].AckAsync(new AckOpts { DoubleAck = true });
        var stream = await js.GetStreamAsync("WQ");
        Assert.Equal(2L, stream.Info.State.Messages);

        var second = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
            await js.CreateOrUpdateConsumerAsync("WQ", new ConsumerConfig("W2") { AckPolicy = ConsumerConfigAckPolicy.Explicit }));
        Assert.Equal(10099, second.Error.ErrCode);
    }

    [Fact(Timeout = 30_000)]
    public async Task Interest_streams_keep_messages_until_every_consumer_acknowledged()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("IN", "in.>") with { Retention = StreamConfigRetention.Interest });

        // Nobody is interested yet: the sequence is used but nothing is kept.
        var skipped = await js.PublishAsync("in.a", "lost");
        Assert.Equal(1UL, skipped.Seq);
        Assert.Equal(0L, (await js.GetStreamAsync("IN")).Info.State.Messages);

        var first = await js.CreateOrUpdateConsumerAsync("IN", new ConsumerConfig("A") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        var second = await js.CreateOrUpdateConsumerAsync("IN", new ConsumerConfig("B") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        await js.PublishAsync("in.a", "kept");

        var fromFirst = Assert.Single(await FetchAsync(first, 1));
        await fromFirst.AckAsync(new AckOpts { DoubleAck = true });
        Assert.Equal(1L, (await js.GetStreamAsync("IN")).Info.State.Messages);

        var fromSecond = Assert.Single(await FetchAsync(second, 1));
        await fromSecond.AckAsync(new AckOpts { DoubleAck = true });
        Assert.Equal(0L, (await js.GetStreamAsync("IN")).Info.State.Messages);
    }

    [Fact(Timeout = 30_000)]
    public async Task Ephemeral_consumers_are_deleted_after_their_inactive_threshold()
    {
        var (server, connection, js) = await StartAsync(messages: 1);
        await using var _ = server;
        await using var __ = connection;
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig { AckPolicy = ConsumerConfigAckPolicy.Explicit, InactiveThreshold = TimeSpan.FromMilliseconds(500) });
        var name = consumer.Info.Name;
        Assert.Equal(8, name.Length);

        var deadline = DateTime.UtcNow.AddSeconds(10);
        var gone = false;
        while (!gone && DateTime.UtcNow < deadline)
        {
            await Task.Delay(100);
            try
            {
                await js.GetConsumerAsync("S", name);
            }
            catch (NatsJSApiException ex) when (ex.Error.ErrCode == 10014)
            {
                gone = true;
            }
        }

        Assert.True(gone);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_pull_consumer_past_max_deliver_publishes_the_max_deliveries_advisory_with_its_json()
    {
        var (server, connection, js) = await StartAsync(messages: 1);
        await using var _ = server;
        await using var __ = connection;
        await using var advisories = await connection.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.C");
        await connection.PingAsync();

        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C")
        {
            AckPolicy = ConsumerConfigAckPolicy.Explicit, AckWait = TimeSpan.FromMilliseconds(300), MaxDeliver = 1,
        });
        Assert.Equal("m1", Assert.Single(await FetchAsync(consumer, 1)).Data);

        // Unacknowledged past its ack wait with no delivery left: the next pull finds nothing and sends the advisory.
        await Task.Delay(600);
        Assert.Empty(await FetchAsync(consumer, 1, TimeSpan.FromSeconds(1)));
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var advisory = await advisories.Msgs.ReadAsync(timeout.Token);
        Assert.Contains("\"type\":\"io.nats.jetstream.advisory.v1.max_deliver\"", advisory.Data, StringComparison.Ordinal);
        Assert.Contains("\"stream_seq\":1", advisory.Data, StringComparison.Ordinal);
    }
}
