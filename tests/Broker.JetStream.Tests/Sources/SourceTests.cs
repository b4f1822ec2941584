using System.Text.Json;
using NATS.Client.Core;
using NATS.Client.JetStream;
using static Broker.JetStream.Tests.Sources.SourceTestKit;

namespace Broker.JetStream.Tests.Sources;

/// <summary>
/// Stream sources (nats-server 2.9.10 <c>setSourceConsumer</c>, <c>processInboundSourceMsg</c>), the same requests
/// against our broker and nats-server on the memory and the file store: a stream takes in the messages of its sources
/// as publishes with <c>Nats-Stream-Source: &lt;name&gt; &lt;origin sequence&gt;</c> (replacing one a sourced message
/// carried), filtered, from <c>opt_start_seq</c>, keeps following, reports <c>sources</c> in stream info, and an
/// update adds and removes sources.
/// </summary>
public sealed class SourceTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(ServersAndStorage), MemberType = typeof(SourceTestKit))]
    public async Task A_stream_takes_in_its_sources_with_the_source_header(ServerKind kind, string storage)
    {
        await using var server = await StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.A", $$$"""{"name":"A","subjects":["a.>"],"storage":"{{{storage}}}"}""");
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.B", $$$"""{"name":"B","subjects":["b.>"],"storage":"{{{storage}}}"}""");
        await PublishAsync(js, "a.1", "a1");
        await PublishAsync(js, "b.1", "b1", new NatsHeaders { ["X-Test"] = "h" });
        await PublishAsync(js, "b.2", "b2");
        await PublishAsync(js, "a.2", "a2");

        var created = await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", $$$"""{"name":"S","storage":"{{{storage}}}","sources":[{"name":"A"},{"name":"B","filter_subject":"b.2"}]}""");
        Assert.Equal(default, Error(created));
        Assert.False(created.GetProperty("config").TryGetProperty("subjects", out _));
        Assert.Equal(120_000_000_000, created.GetProperty("config").GetProperty("duplicate_window").GetInt64());
        await WaitForMessagesAsync(connection, "S", 3);
        await PublishAsync(js, "b.2", "b3");
        await PublishAsync(js, "a.3", "a3");
        await WaitForMessagesAsync(connection, "S", 5);
        var messages = await MessagesAsync(connection, "S");
        Assert.Equal(
            ["a.1 a1 NATS/1.0|Nats-Stream-Source: A 1||", "a.2 a2 NATS/1.0|Nats-Stream-Source: A 2||", "a.3 a3 NATS/1.0|Nats-Stream-Source: A 3||"],
            messages.Select(m => m[(m.IndexOf(' ', StringComparison.Ordinal) + 1)..]).Where(m => m.StartsWith("a.", StringComparison.Ordinal)));
        Assert.Equal(
            ["b.2 b2 NATS/1.0|Nats-Stream-Source: B 2||", "b.2 b3 NATS/1.0|Nats-Stream-Source: B 3||"],
            messages.Select(m => m[(m.IndexOf(' ', StringComparison.Ordinal) + 1)..]).Where(m => m.StartsWith("b.", StringComparison.Ordinal)));

        var sources = (await InfoAsync(connection, "S")).GetProperty("sources").EnumerateArray().OrderBy(s => s.GetProperty("name").GetString()).ToList();
        Assert.Equal(["A", "B"], sources.Select(s => s.GetProperty("name").GetString()));
        Assert.All(sources, s => Assert.Equal(["name", "lag", "active"], s.EnumerateObject().Select(p => p.Name)));
        Assert.All(sources, s => Assert.InRange(s.GetProperty("active").GetInt64(), 0, 10_000_000_000));

        // A stream sourcing S: the header names S (and S's sequence), the one S's message carried is replaced.
        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.T", $$$"""{"name":"T","storage":"{{{storage}}}","sources":[{"name":"S","filter_subject":"a.3"}]}""")));
        await WaitForMessagesAsync(connection, "T", 1);
        var sourced = Assert.Single(await MessagesAsync(connection, "T"));
        var sequenceInS = messages.Single(m => m.Contains(" a.3 ", StringComparison.Ordinal)).Split(' ')[0];
        Assert.Equal($"1 a.3 a3 NATS/1.0|Nats-Stream-Source: S {sequenceInS}||", sourced);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(ServersAndStorage), MemberType = typeof(SourceTestKit))]
    public async Task An_update_adds_and_removes_sources_and_message_ids_are_deduplicated(ServerKind kind, string storage)
    {
        await using var server = await StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.A", $$$"""{"name":"A","subjects":["a.>"],"storage":"{{{storage}}}"}""");
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.B", $$$"""{"name":"B","subjects":["b.>"],"storage":"{{{storage}}}"}""");
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", $$$"""{"name":"S","subjects":["s.>"],"storage":"{{{storage}}}","sources":[{"name":"A"}]}""");
        await PublishAsync(js, "a.1", "a1", new NatsHeaders { ["Nats-Msg-Id"] = "id-1" });
        await PublishAsync(js, "b.1", "b1", new NatsHeaders { ["Nats-Msg-Id"] = "id-1" });
        await PublishAsync(js, "s.1", "s1");
        await WaitForMessagesAsync(connection, "S", 2);

        var updated = await RequestAsync(connection, "$JS.API.STREAM.UPDATE.S", $$$"""{"name":"S","subjects":["s.>"],"storage":"{{{storage}}}","sources":[{"name":"A"},{"name":"B"}]}""");
        Assert.Equal(2, updated.GetProperty("sources").GetArrayLength());
        await PublishAsync(js, "b.2", "b2");
        await WaitForMessagesAsync(connection, "S", 3);

        // B's first message carries the id A's did: the stream's duplicate window drops it.
        var subjects = (await MessagesAsync(connection, "S")).Select(m => m.Split(' ')[1]).ToList();
        Assert.Equal(["a.1", "b.2", "s.1"], subjects.Order(StringComparer.Ordinal));

        updated = await RequestAsync(connection, "$JS.API.STREAM.UPDATE.S", $$$"""{"name":"S","subjects":["s.>"],"storage":"{{{storage}}}","sources":[{"name":"B"}]}""");
        Assert.Equal(["B"], updated.GetProperty("sources").EnumerateArray().Select(s => s.GetProperty("name").GetString()));
        await PublishAsync(js, "a.2", "a2");
        await PublishAsync(js, "b.3", "b3");
        await WaitForMessagesAsync(connection, "S", 4);
        Assert.DoesNotContain(await MessagesAsync(connection, "S"), m => m.Contains(" a.2 ", StringComparison.Ordinal));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Kinds), MemberType = typeof(SourceTestKit))]
    public async Task A_sourcing_stream_republishes_what_it_takes_in_as_it_republishes_publishes(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["a.>"],"storage":"memory"}""");
        var created = await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory","sources":[{"name":"A"}],"republish":{"src":">","dest":"rp.>"}}""");
        Assert.Equal(default, Error(created));
        await using var republished = await connection.SubscribeCoreAsync<string>("rp.>");
        await connection.PingAsync();

        await PublishAsync(js, "a.1", "sourced");
        await PublishAsync(js, "s.1", "published");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var seen = new List<string>();
        await foreach (var message in republished.Msgs.ReadAllAsync(timeout.Token))
        {
            seen.Add($"{message.Subject} {message.Data} {message.Headers?["Nats-Stream"]} {message.Headers?["Nats-Subject"]} {message.Headers?["Nats-Stream-Source"]}");
            if (seen.Count == 2)
            {
                break;
            }
        }

        Assert.Equal(["rp.a.1 sourced S a.1 A 1", "rp.s.1 published S s.1 "], seen.Order(StringComparer.Ordinal));
    }
}
