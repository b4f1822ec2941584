using NATS.Client.Core;
using static Broker.JetStream.Tests.Sources.SourceTestKit;

namespace Broker.JetStream.Tests.Sources;

/// <summary>
/// nats-server 2.10's per-source and per-mirror <c>subject_transforms</c> (2.10.0 <c>setSourceConsumer</c>,
/// <c>setupMirrorConsumer</c>, <c>processInboundSourceMsg</c>, <c>checkStreamCfg</c>, <c>addStream</c>): the origin's
/// consumer is filtered on the transforms' sources, and a message is stored under the destination of the first whose
/// source it is within. Our broker only: nats-server 2.9.10 does not know the field and drops it (it would source
/// everything untransformed), so the expectations follow the 2.10.0 source and its <c>errors.json</c>.
/// </summary>
public sealed class SourceTransformTests
{
    [Theory(Timeout = 60_000)]
    [InlineData("memory")]
    [InlineData("file")]
    public async Task A_source_stores_the_subjects_its_transforms_make_and_an_update_changes_them(string storage)
    {
        await using var server = await StartAsync(ServerKind.Ours);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.O", $$$"""{"name":"O","subjects":["o.>"],"storage":"{{{storage}}}"}""");
        await PublishAsync(js, "o.a.1", "one");
        await PublishAsync(js, "o.b.2", "two");
        await PublishAsync(js, "o.c.3", "three");
        await PublishAsync(js, "o.d.4", "four");

        const string transforms = """[{"src":"o.a.*","dest":"a.{{wildcard(1)}}"},{"src":"o.b.>","dest":"b.>"},{"src":"o.c.>","dest":""}]""";
        var created = await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", $$$"""{"name":"S","storage":"{{{storage}}}","sources":[{"name":"O","subject_transforms":{{{transforms}}}}]}""");
        Assert.Equal(default, Error(created));
        Assert.Equal(transforms, created.GetProperty("config").GetProperty("sources")[0].GetProperty("subject_transforms").GetRawText());
        await WaitForMessagesAsync(connection, "S", 3);
        await PublishAsync(js, "o.b.x.y", "five");
        await PublishAsync(js, "o.d.5", "six");
        await PublishAsync(js, "o.a.6", "seven");
        await WaitForMessagesAsync(connection, "S", 5);
        Assert.Equal(
            [
                "1 a.1 one NATS/1.0|Nats-Stream-Source: O 1||",
                "2 b.2 two NATS/1.0|Nats-Stream-Source: O 2||",
                "3 o.c.3 three NATS/1.0|Nats-Stream-Source: O 3||",
                "4 b.x.y five NATS/1.0|Nats-Stream-Source: O 5||",
                "5 a.6 seven NATS/1.0|Nats-Stream-Source: O 7||",
            ],
            await MessagesAsync(connection, "S"));
        var source = (await InfoAsync(connection, "S")).GetProperty("sources")[0];
        Assert.Equal(transforms, source.GetProperty("subject_transforms").GetRawText());

        // New transforms whose filter overlaps the old: followed on from where the source was, transformed anew.
        var updated = await RequestAsync(connection, "$JS.API.STREAM.UPDATE.S", $$$"""{"name":"S","storage":"{{{storage}}}","sources":[{"name":"O","subject_transforms":[{"src":"o.>","dest":"y.>"}]}]}""");
        Assert.Equal(default, Error(updated));
        await PublishAsync(js, "o.e.8", "eight");
        await WaitForMessagesAsync(connection, "S", 6);
        Assert.Equal("6 y.e.8 eight NATS/1.0|Nats-Stream-Source: O 8||", (await MessagesAsync(connection, "S"))[^1]);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_mirror_stores_the_transformed_subjects_at_the_origin_sequences()
    {
        await using var server = await StartAsync(ServerKind.Ours);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.O", """{"name":"O","subjects":["o.>"],"storage":"memory"}""");
        await PublishAsync(js, "o.a.1", "one");
        await PublishAsync(js, "o.b.2", "two");

        var created = await RequestAsync(connection, "$JS.API.STREAM.CREATE.M", """{"name":"M","storage":"memory","mirror":{"name":"O","subject_transforms":[{"src":"o.a.>","dest":"m.>"}]}}""");
        Assert.Equal(default, Error(created));
        await WaitForMessagesAsync(connection, "M", 1);
        await PublishAsync(js, "o.b.3", "three");
        await PublishAsync(js, "o.a.4", "four", new NatsHeaders { ["X-Test"] = "h" });
        await WaitForMessagesAsync(connection, "M", 2);
        Assert.Equal(["1 m.1 one", "4 m.4 four NATS/1.0|X-Test: h||"], await MessagesAsync(connection, "M"));
        Assert.Equal("""[{"src":"o.a.>","dest":"m.>"}]""", (await InfoAsync(connection, "M")).GetProperty("mirror").GetProperty("subject_transforms").GetRawText());

        // A mirror is fixed at creation, its transforms too.
        var updated = await RequestAsync(connection, "$JS.API.STREAM.UPDATE.M", """{"name":"M","storage":"memory","mirror":{"name":"O","subject_transforms":[{"src":"o.a.>","dest":"n.>"}]}}""");
        Assert.Equal((400, 10055, "stream mirror configuration can not be updated"), Error(updated));
    }

    [Theory(Timeout = 30_000)]
    [InlineData("""{"sources":[{"name":"O","filter_subject":"o.a","subject_transforms":[{"src":"o.b","dest":"x"}]}]}""", 400, 10144, "source with multiple subject transforms cannot also have a single subject filter")]
    [InlineData("""{"sources":[{"name":"O","subject_transforms":[{"src":"","dest":"x"}]}]}""", 400, 10145, "source subject filter is invalid")]
    [InlineData("""{"sources":[{"name":"O","subject_transforms":[{"src":"o..a","dest":"x"}]}]}""", 400, 10145, "source subject filter is invalid")]
    [InlineData("""{"sources":[{"name":"O","subject_transforms":[{"src":"o.*","dest":"x.{{nope(1)}}"}]}]}""", 400, 10146, "source transform destination is invalid")]
    [InlineData("""{"sources":[{"name":"O","subject_transforms":[{"src":"o.>","dest":"x.>"},{"src":"o.a","dest":"y"}]}]}""", 400, 10147, "source filters can not overlap")]
    [InlineData("""{"sources":[{"name":"O","subject_transforms":[{"src":"o.*","dest":"x.$2"}]}]}""", 500, 10049, "subject transform from 'o.*' to 'x.$2' for the source: invalid mapping destination: wildcard index out of range in $2: [2]")]
    [InlineData("""{"sources":[{"name":"O","subject_transforms":[{"src":"o.a","dest":"x"}]},{"name":"O","subject_transforms":[{"src":"o.b","dest":"y"}]}]}""", 500, 10052, "several sources of one stream with subject transforms are not supported by this broker")]
    [InlineData("""{"mirror":{"name":"O","filter_subject":"o.a","subject_transforms":[{"src":"o.b","dest":"x"}]}}""", 400, 10150, "mirror with multiple subject transforms cannot also have a single subject filter")]
    [InlineData("""{"mirror":{"name":"O","subject_transforms":[{"src":"o.>.a","dest":"x"}]}}""", 400, 10151, "mirror subject filter is invalid")]
    [InlineData("""{"mirror":{"name":"O","subject_transforms":[{"src":"o.a","dest":"x"},{"src":"o.a","dest":"y"}]}}""", 400, 10152, "mirror subject filters can not overlap")]
    [InlineData("""{"mirror":{"name":"O","subject_transforms":[{"src":"o.*","dest":"x.$2"}]}}""", 500, 10049, "subject transform from 'o.*' to 'x.$2' for the mirror: invalid mapping destination: wildcard index out of range in $2: [2]")]
    public async Task Transforms_nats_server_2_10_refuses_are_refused_with_its_errors(string origin, int code, int errorCode, string description)
    {
        await using var server = await StartAsync(ServerKind.Ours);
        var (connection, _) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        var body = """{"name":"S","storage":"memory",""" + origin[1..];
        Assert.Equal((code, errorCode, description), Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", body)));

        // The same sources on an update of a stream that has none (a mirror cannot be added by one); a transform that
        // does not compile is a stream update error there.
        if (origin.Contains("sources", StringComparison.Ordinal))
        {
            Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", """{"name":"S","storage":"memory","subjects":["s"]}""")));
            var updated = Error(await RequestAsync(connection, "$JS.API.STREAM.UPDATE.S", """{"name":"S","storage":"memory","subjects":["s"],""" + origin[1..]));
            Assert.Equal(errorCode == 10049 ? (500, 10069, description) : (code, errorCode, description), updated);
        }
    }
}
