using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>Streams through NATS.Client.JetStream 3.3.2: create, publish, info, get, purge, delete, limits, headers.</summary>
public class StreamClientTests
{
    private static StreamConfig Memory(string name, params string[] subjects) => new(name, subjects) { Storage = StreamConfigStorage.Memory };

    [Fact(Timeout = 30_000)]
    public async Task Publish_to_a_memory_stream_is_acknowledged_with_its_sequence()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;

        var stream = await js.CreateStreamAsync(Memory("ORDERS", "orders.*"));
        Assert.Equal("ORDERS", stream.Info.Config.Name);

        for (var i = 1; i <= 3; i++)
        {
            var ack = await js.PublishAsync("orders.new", $"order {i}");
            ack.EnsureSuccess();
            Assert.Equal("ORDERS", ack.Stream);
            Assert.Equal((ulong)i, ack.Seq);
        }

        await stream.RefreshAsync();
        Assert.Equal(3L, stream.Info.State.Messages);
        Assert.Equal(1UL, stream.Info.State.FirstSeq);
        Assert.Equal(3UL, stream.Info.State.LastSeq);
    }

    [Fact(Timeout = 30_000)]
    public async Task Names_list_update_and_delete_streams()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;

        await js.CreateStreamAsync(Memory("A", "a.>"));
        await js.CreateStreamAsync(Memory("B", "b.>"));
        var names = new List<string>();
        await foreach (var name in js.ListStreamNamesAsync())
        {
            names.Add(name);
        }

        Assert.Equal(["A", "B"], names.Order());
        var filtered = new List<string>();
        await foreach (var name in js.ListStreamNamesAsync(subject: "b.x"))
        {
            filtered.Add(name);
        }

        Assert.Equal(["B"], filtered);

        var updated = await js.UpdateStreamAsync(Memory("A", "a.>", "c.>") with { MaxMsgs = 10, Description = "changed" });
        Assert.Equal(["a.>", "c.>"], updated.Info.Config.Subjects!);
        Assert.Equal(10, updated.Info.Config.MaxMsgs);

        (await js.PublishAsync("c.one", "x")).EnsureSuccess();
        Assert.True(await js.DeleteStreamAsync("A"));
        var missing = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.GetStreamAsync("A"));
        Assert.Equal(10059, missing.Error.ErrCode);
    }

    [Fact(Timeout = 30_000)]
    public async Task Overlapping_subjects_and_a_changed_config_are_refused_with_nats_server_errors()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;

        await js.CreateStreamAsync(Memory("ORDERS", "orders.*"));
        var overlap = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateStreamAsync(Memory("OTHER", "orders.>")));
        Assert.Equal(10065, overlap.Error.ErrCode);
        Assert.Equal("subjects overlap with an existing stream", overlap.Error.Description);

        var changed = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateStreamAsync(Memory("ORDERS", "orders.x")));
        Assert.Equal(10058, changed.Error.ErrCode);

        // Creating the same stream again succeeds.
        await js.CreateStreamAsync(Memory("ORDERS", "orders.*"));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_storage_type_no_plugin_provides_is_refused_at_creation()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;

        // nats-server's default storage is file; only the memory store is loaded here.
        var refused = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateStreamAsync(new StreamConfig("FILE", ["file.>"])));
        Assert.Equal(500, refused.Error.Code);
        Assert.Equal(10049, refused.Error.ErrCode);
        Assert.Contains("storage type \"file\"", refused.Error.Description, StringComparison.Ordinal);
        server.Ours!.ExpectErrors();
    }

    [Fact(Timeout = 30_000)]
    public async Task Message_ids_inside_the_duplicate_window_are_acknowledged_as_duplicates()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("D", "d.>") with { DuplicateWindow = TimeSpan.FromSeconds(30) });

        var first = await js.PublishAsync("d.x", "one", opts: new NatsJSPubOpts { MsgId = "id-1" });
        var again = await js.PublishAsync("d.x", "one", opts: new NatsJSPubOpts { MsgId = "id-1" });
        var other = await js.PublishAsync("d.x", "two", opts: new NatsJSPubOpts { MsgId = "id-2" });

        Assert.False(first.Duplicate);
        Assert.True(again.Duplicate);
        Assert.Equal(first.Seq, again.Seq);
        Assert.Equal(2UL, other.Seq);
    }

    [Fact(Timeout = 30_000)]
    public async Task Expected_headers_guard_publishes()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("E", "e.>"));

        (await js.PublishAsync("e.a", "1", opts: new NatsJSPubOpts { MsgId = "m1" })).EnsureSuccess();
        (await js.PublishAsync("e.b", "2", opts: new NatsJSPubOpts { ExpectedLastSequence = 1 })).EnsureSuccess();
        (await js.PublishAsync("e.a", "3", opts: new NatsJSPubOpts { ExpectedLastSubjectSequence = 1 })).EnsureSuccess();
        (await js.PublishAsync("e.c", "4", opts: new NatsJSPubOpts { ExpectedStream = "E" })).EnsureSuccess();
        (await js.PublishAsync("e.c", "5", opts: new NatsJSPubOpts { ExpectedLastMsgId = "" })).EnsureSuccess();

        var wrongSeq = await js.PublishAsync("e.b", "x", opts: new NatsJSPubOpts { ExpectedLastSequence = 1 });
        Assert.Equal(10071, wrongSeq.Error!.ErrCode);
        Assert.Equal("wrong last sequence: 5", wrongSeq.Error.Description);

        var wrongSubjectSeq = await js.PublishAsync("e.a", "x", opts: new NatsJSPubOpts { ExpectedLastSubjectSequence = 1 });
        Assert.Equal("wrong last sequence: 3", wrongSubjectSeq.Error!.Description);

        var wrongStream = await js.PublishAsync("e.a", "x", opts: new NatsJSPubOpts { ExpectedStream = "OTHER" });
        Assert.Equal(10060, wrongStream.Error!.ErrCode);

        (await js.PublishAsync("e.d", "6", opts: new NatsJSPubOpts { MsgId = "m6" })).EnsureSuccess();
        var wrongId = await js.PublishAsync("e.d", "x", opts: new NatsJSPubOpts { ExpectedLastMsgId = "m1" });
        Assert.Equal(10070, wrongId.Error!.ErrCode);
        Assert.Equal("wrong last msg ID: m6", wrongId.Error.Description);
    }

    [Fact(Timeout = 30_000)]
    public async Task Limits_keep_the_newest_messages_and_discard_new_refuses()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;

        await js.CreateStreamAsync(Memory("L", "l.>") with { MaxMsgs = 3 });
        for (var i = 0; i < 5; i++)
        {
            (await js.PublishAsync("l.x", i)).EnsureSuccess();
        }

        var info = (await js.GetStreamAsync("L")).Info;
        Assert.Equal(3L, info.State.Messages);
        Assert.Equal(3UL, info.State.FirstSeq);

        await js.CreateStreamAsync(Memory("N", "n.>") with { MaxMsgs = 1, Discard = StreamConfigDiscard.New });
        (await js.PublishAsync("n.x", 1)).EnsureSuccess();
        var refused = await js.PublishAsync("n.x", 2);
        Assert.Equal(10077, refused.Error!.ErrCode);
        Assert.Equal("maximum messages exceeded", refused.Error.Description);

        await js.CreateStreamAsync(Memory("P", "p.>") with { MaxMsgsPerSubject = 2 });
        for (var i = 0; i < 4; i++)
        {
            await js.PublishAsync("p.a", i);
            await js.PublishAsync("p.b", i);
        }

        Assert.Equal(4L, (await js.GetStreamAsync("P")).Info.State.Messages);

        await js.CreateStreamAsync(Memory("S", "s.>") with { MaxMsgSize = 10 });
        var tooBig = await js.PublishAsync("s.x", "this payload is longer than ten bytes");
        Assert.Equal(10054, tooBig.Error!.ErrCode);
    }

    [Fact(Timeout = 30_000)]
    public async Task Max_age_expires_messages()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("AGE", "age.>") with { MaxAge = TimeSpan.FromMilliseconds(300) });
        for (var i = 0; i < 5; i++)
        {
            await js.PublishAsync("age.x", i);
        }

        var stream = await js.GetStreamAsync("AGE");
        var deadline = DateTime.UtcNow.AddSeconds(10);
        do
        {
            await Task.Delay(50);
            await stream.RefreshAsync();
        }
        while (stream.Info.State.Messages > 0 && DateTime.UtcNow < deadline);

        Assert.Equal(0L, stream.Info.State.Messages);
        Assert.Equal(5UL, stream.Info.State.LastSeq);
    }

    [Fact(Timeout = 30_000)]
    public async Task Get_delete_and_purge_messages()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        var stream = await js.CreateStreamAsync(Memory("M", "m.>"));
        for (var i = 1; i <= 6; i++)
        {
            var headers = new NatsHeaders { ["X-Index"] = i.ToString(System.Globalization.CultureInfo.InvariantCulture) };
            await js.PublishAsync(i % 2 == 0 ? "m.even" : "m.odd", $"v{i}", headers: headers);
        }

        var bySequence = await stream.GetAsync(new StreamMsgGetRequest { Seq = 3 });
        Assert.Equal("m.odd", bySequence.Message.Subject);
        Assert.Equal("v3", System.Text.Encoding.UTF8.GetString(bySequence.Message.Data.Span));

        var last = await stream.GetAsync(new StreamMsgGetRequest { LastBySubj = "m.even" });
        Assert.Equal(6UL, last.Message.Seq);

        var missing = await Assert.ThrowsAsync<NatsJSApiException>(async () => await stream.GetAsync(new StreamMsgGetRequest { Seq = 99 }));
        Assert.Equal(10037, missing.Error.ErrCode);

        var deleted = await stream.DeleteMessageAsync(new StreamMsgDeleteRequest { Seq = 2 });
        Assert.True(deleted.Success);
        var again = await Assert.ThrowsAsync<NatsJSApiException>(async () => await stream.DeleteMessageAsync(new StreamMsgDeleteRequest { Seq = 2 }));
        Assert.Equal(10043, again.Error.ErrCode);

        var purged = await stream.PurgeAsync(new StreamPurgeRequest { Filter = "m.odd", Keep = 1 });
        Assert.Equal(2L, purged.Purged);
        await stream.RefreshAsync();
        Assert.Equal(3L, stream.Info.State.Messages);

        var all = await stream.PurgeAsync(new StreamPurgeRequest());
        Assert.Equal(3L, all.Purged);
        await stream.RefreshAsync();
        Assert.Equal(0L, stream.Info.State.Messages);
        Assert.Equal(7UL, stream.Info.State.FirstSeq);
    }

    [Fact(Timeout = 30_000)]
    public async Task Sealed_deny_delete_and_deny_purge_refuse_changes()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        var stream = await js.CreateStreamAsync(Memory("G", "g.>") with { DenyDelete = true, DenyPurge = true });
        await js.PublishAsync("g.x", 1);

        var delete = await Assert.ThrowsAsync<NatsJSApiException>(async () => await stream.DeleteMessageAsync(new StreamMsgDeleteRequest { Seq = 1 }));
        Assert.Equal(10057, delete.Error.ErrCode);
        var purge = await Assert.ThrowsAsync<NatsJSApiException>(async () => await stream.PurgeAsync(new StreamPurgeRequest()));
        Assert.Equal(10110, purge.Error.ErrCode);

        await js.UpdateStreamAsync(stream.Info.Config with { Sealed = true });
        var sealedAck = await js.PublishAsync("g.x", 2);
        Assert.Equal(10109, sealedAck.Error!.ErrCode);
    }

    [Fact(Timeout = 30_000)]
    public async Task Rollup_headers_replace_a_subject_or_the_whole_stream()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("R", "r.>") with { AllowRollupHdrs = true });
        await js.PublishAsync("r.a", 1);
        await js.PublishAsync("r.a", 2);
        await js.PublishAsync("r.b", 3);
        (await js.PublishAsync("r.a", 4, headers: new NatsHeaders { ["Nats-Rollup"] = "sub" })).EnsureSuccess();
        Assert.Equal(2L, (await js.GetStreamAsync("R")).Info.State.Messages);

        (await js.PublishAsync("r.c", 5, headers: new NatsHeaders { ["Nats-Rollup"] = "all" })).EnsureSuccess();
        var state = (await js.GetStreamAsync("R")).Info.State;
        Assert.Equal(1L, state.Messages);
        Assert.Equal(5UL, state.FirstSeq);

        await js.CreateStreamAsync(Memory("NR", "nr.>"));
        var refused = await js.PublishAsync("nr.a", 1, headers: new NatsHeaders { ["Nats-Rollup"] = "sub" });
        Assert.Equal(10111, refused.Error!.ErrCode);
    }

    [Fact(Timeout = 30_000)]
    public async Task Direct_get_returns_the_message_with_stream_headers()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("DG", "dg.>") with { AllowDirect = true });
        await js.PublishAsync("dg.a", "first");
        await js.PublishAsync("dg.a", "second");

        var reply = await connection.RequestAsync<string, string>("$JS.API.DIRECT.GET.DG", "{\"last_by_subj\":\"dg.a\"}");
        Assert.Equal("second", reply.Data);
        Assert.Equal("DG", reply.Headers!["Nats-Stream"].ToString());
        Assert.Equal("dg.a", reply.Headers["Nats-Subject"].ToString());
        Assert.Equal("2", reply.Headers["Nats-Sequence"].ToString());

        var bySubject = await connection.RequestAsync<string>("$JS.API.DIRECT.GET.DG.dg.a");
        Assert.Equal("second", bySubject.Data);

        var missing = await connection.RequestAsync<string, string>("$JS.API.DIRECT.GET.DG", "{\"seq\":77}");
        Assert.Equal(404, missing.Headers!.Code);
        Assert.Equal("Message Not Found", missing.Headers.MessageText);
    }

    [Fact(Timeout = 30_000)]
    public async Task Account_info_reports_usage_and_limits()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(Memory("U", "u.>"));
        await js.PublishAsync("u.x", "12345");

        var info = await js.GetAccountInfoAsync();
        Assert.Equal(1, info.Streams);
        Assert.Equal(24UL, info.Memory);
        Assert.Equal(-1, info.Limits.MaxStreams);
        // The stream create; the INFO request counts once answered, as in nats-server 2.9.10 (RawApiComparisonTests
        // compares the exact counts).
        Assert.True(info.Api.Total >= 1, $"api total {info.Api.Total}, errors {info.Api.Errors}");
    }
}
