using System.Text.Json;
using NATS.Client.Core;
using NATS.Client.JetStream;
using static Broker.JetStream.Tests.Sources.SourceTestKit;

namespace Broker.JetStream.Tests.Sources;

/// <summary>
/// Stream mirrors (nats-server 2.9.10 <c>setupMirrorConsumer</c>, <c>processInboundMirrorMsg</c>), the same requests
/// against our broker and nats-server on the memory and the file store: a mirror copies its origin at the origin's
/// sequences and times and keeps following it, starts where <c>opt_start_seq</c> says, reports <c>mirror</c> in stream info, and
/// its configuration errors are nats-server's.
/// </summary>
public sealed class MirrorTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(ServersAndStorage), MemberType = typeof(SourceTestKit))]
    public async Task A_mirror_copies_its_origin_and_follows_it(ServerKind kind, string storage)
    {
        await using var server = await StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.O", $$$"""{"name":"O","subjects":["o.>"],"storage":"{{{storage}}}"}""");
        await PublishAsync(js, "o.1", "one");
        await PublishAsync(js, "o.2", "two", new NatsHeaders { ["X-Test"] = "h" });
        await PublishAsync(js, "o.1", "three");
        await RequestAsync(connection, "$JS.API.STREAM.MSG.DELETE.O", """{"seq":2}""");

        var created = await RequestAsync(connection, "$JS.API.STREAM.CREATE.M", $$$"""{"name":"M","storage":"{{{storage}}}","mirror":{"name":"O"}}""");
        Assert.Equal(default, Error(created));
        var config = created.GetProperty("config");
        Assert.False(config.TryGetProperty("subjects", out _));
        Assert.False(config.TryGetProperty("duplicate_window", out _));
        Assert.Equal("""{"name":"O"}""", config.GetProperty("mirror").GetRawText());
        Assert.False(created.TryGetProperty("mirror", out _));

        await WaitForMessagesAsync(connection, "M", 2);
        Assert.Equal(["1 o.1 one", "3 o.1 three"], await MessagesAsync(connection, "M"));

        // Live: what the origin takes next arrives at the same sequences; a publish on the origin's subjects is not the mirror's.
        var ack = await js.PublishAsync("o.3", "four");
        Assert.Equal("O", ack.Stream);
        await PublishAsync(js, "o.2", "five", new NatsHeaders { ["X-Test"] = "h2" });
        await WaitForMessagesAsync(connection, "M", 4);
        Assert.Equal(["1 o.1 one", "3 o.1 three", "4 o.3 four", "5 o.2 five NATS/1.0|X-Test: h2||"], await MessagesAsync(connection, "M"));

        var info = await InfoAsync(connection, "M");
        var mirror = info.GetProperty("mirror");
        Assert.Equal(["name", "lag", "active"], mirror.EnumerateObject().Select(p => p.Name));
        Assert.Equal(("O", 0UL), (mirror.GetProperty("name").GetString(), mirror.GetProperty("lag").GetUInt64()));
        Assert.InRange(mirror.GetProperty("active").GetInt64(), 0, 10_000_000_000);
        Assert.Equal((5UL, 1UL, 4L), (info.GetProperty("state").GetProperty("last_seq").GetUInt64(), info.GetProperty("state").GetProperty("first_seq").GetUInt64(), info.GetProperty("state").GetProperty("messages").GetInt64()));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(ServersAndStorage), MemberType = typeof(SourceTestKit))]
    public async Task A_mirrored_message_keeps_its_origins_time(ServerKind kind, string storage)
    {
        await using var server = await StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.O", $$$"""{"name":"O","subjects":["o.>"],"storage":"{{{storage}}}"}""");
        await PublishAsync(js, "o.1", "one");
        await PublishAsync(js, "o.2", "two");
        var originTimes = new[] { await TimeOfAsync(connection, "O", 1), await TimeOfAsync(connection, "O", 2) };

        // Later than both, so a mirror storing at its own time would differ from them.
        var latest = DateTimeOffset.Parse(originTimes[1], System.Globalization.CultureInfo.InvariantCulture);
        while (DateTimeOffset.UtcNow < latest.AddMilliseconds(300))
        {
            await Task.Delay(20);
        }

        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.M", $$$"""{"name":"M","storage":"{{{storage}}}","mirror":{"name":"O"}}""")));
        await WaitForMessagesAsync(connection, "M", 2);
        Assert.Equal(originTimes, new[] { await TimeOfAsync(connection, "M", 1), await TimeOfAsync(connection, "M", 2) });

        // And one taken in while following.
        await PublishAsync(js, "o.3", "three");
        await WaitForMessagesAsync(connection, "M", 3);
        Assert.Equal(await TimeOfAsync(connection, "O", 3), await TimeOfAsync(connection, "M", 3));
    }

    private static async Task<string> TimeOfAsync(NatsConnection connection, string stream, ulong sequence)
    {
        var reply = await RequestAsync(connection, $"$JS.API.STREAM.MSG.GET.{stream}", $"{{\"seq\":{sequence}}}");
        return reply.GetProperty("message").GetProperty("time").GetString()!;
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(ServersAndStorage), MemberType = typeof(SourceTestKit))]
    public async Task A_mirror_starts_at_opt_start_seq_and_filters(ServerKind kind, string storage)
    {
        await using var server = await StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.O", $$$"""{"name":"O","subjects":["o.>"],"storage":"{{{storage}}}"}""");
        for (var i = 1; i <= 5; i++)
        {
            await PublishAsync(js, i % 2 == 0 ? "o.even" : "o.odd", $"m{i}");
        }

        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.M", $$$"""{"name":"M","storage":"{{{storage}}}","mirror":{"name":"O","opt_start_seq":3}}""")));
        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.F", $$$"""{"name":"F","storage":"{{{storage}}}","mirror":{"name":"O","filter_subject":"o.odd"}}""")));
        await WaitForMessagesAsync(connection, "M", 3);
        await WaitForMessagesAsync(connection, "F", 3);
        await PublishAsync(js, "o.even", "m6");
        await PublishAsync(js, "o.odd", "m7");
        await WaitForMessagesAsync(connection, "M", 5);
        await WaitForMessagesAsync(connection, "F", 4);
        Assert.Equal(["3 o.odd m3", "4 o.even m4", "5 o.odd m5", "6 o.even m6", "7 o.odd m7"], await MessagesAsync(connection, "M"));
        Assert.Equal(["1 o.odd m1", "3 o.odd m3", "5 o.odd m5", "7 o.odd m7"], await MessagesAsync(connection, "F"));
        Assert.Equal(3UL, (await InfoAsync(connection, "M")).GetProperty("state").GetProperty("first_seq").GetUInt64());
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Kinds), MemberType = typeof(SourceTestKit))]
    public async Task Mirror_configuration_errors_are_nats_servers(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        var (connection, _) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.O", """{"name":"O","subjects":["o.>"],"storage":"memory","max_msg_size":1024}""");

        async Task<(int, int, string)> Create(string name, string body) =>
            Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE." + name, body));

        Assert.Equal((400, 10034, "stream mirrors can not contain subjects"), await Create("M", """{"name":"M","storage":"memory","subjects":["m"],"mirror":{"name":"O"}}"""));
        Assert.Equal((400, 10031, "stream mirrors can not also contain other sources"), await Create("M", """{"name":"M","storage":"memory","mirror":{"name":"O"},"sources":[{"name":"O"}]}"""));
        Assert.Equal((400, 10030, "stream mirror must have max message size >= source"), await Create("M", """{"name":"M","storage":"memory","max_msg_size":10,"mirror":{"name":"O"}}"""));
        Assert.Equal((500, 10052, "mirror 'O' filter subject 'x.y' does not overlap with any origin stream subject"), await Create("M", """{"name":"M","storage":"memory","mirror":{"name":"O","filter_subject":"x.y"}}"""));
        Assert.Equal((400, 10024, "stream external delivery prefix d.* must not contain wildcards"), await Create("M", """{"name":"M","storage":"memory","mirror":{"name":"X","external":{"api":"a","deliver":"d.*"}}}"""));
        Assert.Equal((500, 10052, "stream external api prefix \"a.>\" must be a valid subject without wildcards"), await Create("M", """{"name":"M","storage":"memory","mirror":{"name":"X","external":{"api":"a.>","deliver":"d"}}}"""));
        Assert.Equal((400, 10021, "stream external api prefix $JS.API must not overlap with $JS.API"), await Create("M", """{"name":"M","storage":"memory","mirror":{"name":"X","external":{"api":"$JS.API","deliver":"d"}}}"""));
        Assert.Equal((400, 10046, "stream source must have max message size >= target"), await Create("S", """{"name":"S","storage":"memory","max_msg_size":10,"sources":[{"name":"O"}]}"""));
        Assert.Equal((500, 10052, "stream has no mirror but does have mirror direct"), await Create("S", """{"name":"S","storage":"memory","mirror_direct":true}"""));

        // A mirror cannot be changed, added or removed by an update; sources can, but not into a cycle.
        Assert.Equal(default, await Create("M", """{"name":"M","storage":"memory","mirror":{"name":"O"}}"""));
        Assert.Equal((400, 10055, "stream mirror configuration can not be updated"), Error(await RequestAsync(connection, "$JS.API.STREAM.UPDATE.M", """{"name":"M","storage":"memory","mirror":{"name":"O","opt_start_seq":2}}""")));
        Assert.Equal((400, 10055, "stream mirror configuration can not be updated"), Error(await RequestAsync(connection, "$JS.API.STREAM.UPDATE.M", """{"name":"M","storage":"memory"}""")));
        Assert.Equal((400, 10034, "stream mirrors can not contain subjects"), Error(await RequestAsync(connection, "$JS.API.STREAM.UPDATE.O", """{"name":"O","subjects":["o.>"],"storage":"memory","max_msg_size":1024,"mirror":{"name":"M"}}""")));
        Assert.Equal(default, await Create("S1", """{"name":"S1","storage":"memory","sources":[{"name":"O"}]}"""));
        Assert.Equal((400, 10055, "stream mirror configuration can not be updated"), Error(await RequestAsync(connection, "$JS.API.STREAM.UPDATE.S1", """{"name":"S1","storage":"memory","mirror":{"name":"O"}}""")));
        Assert.Equal(default, await Create("S2", """{"name":"S2","storage":"memory","sources":[{"name":"S1"}]}"""));
        Assert.Equal((500, 10052, "detected cycle"), Error(await RequestAsync(connection, "$JS.API.STREAM.UPDATE.S1", """{"name":"S1","storage":"memory","sources":[{"name":"O"},{"name":"S2"}]}""")));
        Assert.Equal((500, 10052, "detected cycle"), await Create("S3", """{"name":"S3","storage":"memory","sources":[{"name":"S3"}]}"""));

        // An origin name that is no stream name is accepted and asked for in vain, as by nats-server.
        Assert.Equal(default, await Create("E", """{"name":"E","storage":"memory","mirror":{"name":"a b"}}"""));
        await Eventually.AssertAsync(
            async () => (await InfoAsync(connection, "E")).GetProperty("mirror").GetRawText()
                == """{"name":"a b","lag":0,"active":-1,"error":{"code":404,"err_code":10059,"description":"stream not found"}}""",
            "the mirror reports its origin not found");
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Kinds), MemberType = typeof(SourceTestKit))]
    public async Task A_mirror_of_a_missing_origin_reports_the_error_and_follows_once_it_exists(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.M", """{"name":"M","storage":"memory","mirror":{"name":"O"}}""")));

        JsonElement mirror = default;
        await Eventually.AssertAsync(
            async () =>
            {
                mirror = (await InfoAsync(connection, "M")).GetProperty("mirror");
                return mirror.TryGetProperty("error", out _);
            },
            "the mirror reports its origin missing",
            TimeSpan.FromSeconds(15));
        Assert.Equal("""{"code":404,"err_code":10059,"description":"stream not found"}""", mirror.GetProperty("error").GetRawText());
        Assert.Equal(-1, mirror.GetProperty("active").GetInt64());

        await RequestAsync(connection, "$JS.API.STREAM.CREATE.O", """{"name":"O","subjects":["o.>"],"storage":"memory"}""");
        await PublishAsync(js, "o.1", "late");
        await WaitForMessagesAsync(connection, "M", 1);
        Assert.Equal(["1 o.1 late"], await MessagesAsync(connection, "M"));
        await Eventually.AssertAsync(async () => !(await InfoAsync(connection, "M")).GetProperty("mirror").TryGetProperty("error", out _), "the error clears");
    }
}
