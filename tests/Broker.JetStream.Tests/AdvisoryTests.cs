using System.Globalization;
using System.Text.Json.Nodes;
using Broker.Core;
using Broker.Core.Auth;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// <c>$JS.EVENT.ADVISORY</c> seen by a subscriber on <c>$JS.EVENT.&gt;</c> while a JetStream client works, on our broker
/// and nats-server 2.9.10 alike: the subjects, the JSON keys in nats-server's order, the stable values, NUID-like ids
/// and UTC timestamps. nats-server's API audit carries the requester's <c>rtt</c>, which the bus does not tell
/// JetStream: the <c>client</c> keys are compared without it.
/// </summary>
public sealed class AdvisoryTests
{
    private static readonly string[] TypedEvent = ["type", "id", "timestamp"];

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Stream_and_consumer_actions_and_every_API_response_are_advised(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await using var events = await connection.SubscribeCoreAsync<string>("$JS.EVENT.>");
        await connection.PingAsync();

        await js.CreateStreamAsync(new StreamConfig("S", ["s"]) { Storage = StreamConfigStorage.Memory });
        await js.UpdateStreamAsync(new StreamConfig("S", ["s", "t"]) { Storage = StreamConfigStorage.Memory });
        await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("D") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        await js.DeleteConsumerAsync("S", "C");
        await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.GetStreamAsync("MISSING"));
        await js.DeleteStreamAsync("S");

        // nats-server 2.9.10 may lose what a stream's deletion queues (its stream.stop closes the send loop right after
        // queueing the consumers' and the stream's delete advisories): required of ours, taken when they come from it.
        string[] atStreamDelete = ["$JS.EVENT.ADVISORY.CONSUMER.DELETED.S.D", "$JS.EVENT.ADVISORY.STREAM.DELETED.S"];
        var received = kind == ServerKind.Ours ? await ReceiveAsync(events, 14) : await ReceiveAsync(events, 12, m => !atStreamDelete.Contains(m.Subject));
        var subjects = received.Select(m => m.Subject).ToList();
        Assert.Equal(
            [
                "$JS.EVENT.ADVISORY.CONSUMER.CREATED.S.C", "$JS.EVENT.ADVISORY.CONSUMER.CREATED.S.D", "$JS.EVENT.ADVISORY.CONSUMER.DELETED.S.C",
                "$JS.EVENT.ADVISORY.STREAM.CREATED.S", "$JS.EVENT.ADVISORY.STREAM.UPDATED.S",
            ],
            subjects.Where(s => s != "$JS.EVENT.ADVISORY.API" && !atStreamDelete.Contains(s)).Order(StringComparer.Ordinal));
        if (kind == ServerKind.Ours)
        {
            // Deleting a stream advises its consumers' deletion before its own.
            Assert.Equal(atStreamDelete, subjects.Where(atStreamDelete.Contains));
        }

        foreach (var (subject, json) in received)
        {
            var body = JsonNode.Parse(json)!.AsObject();
            AssertTypedEvent(body);
            var tokens = subject.Split('.');
            switch (tokens[3])
            {
                case "STREAM":
                    Assert.Equal([.. TypedEvent, "stream", "action"], body.Select(p => p.Key));
                    Assert.Equal("io.nats.jetstream.advisory.v1.stream_action", (string?)body["type"]);
                    Assert.Equal("S", (string?)body["stream"]);
                    Assert.Equal(tokens[4] switch { "CREATED" => "create", "UPDATED" => "modify", _ => "delete" }, (string?)body["action"]);
                    break;
                case "CONSUMER":
                    Assert.Equal([.. TypedEvent, "stream", "consumer", "action"], body.Select(p => p.Key));
                    Assert.Equal("io.nats.jetstream.advisory.v1.consumer_action", (string?)body["type"]);
                    Assert.Equal(("S", tokens[6]), ((string?)body["stream"], (string?)body["consumer"]));
                    Assert.Equal(tokens[4] == "CREATED" ? "create" : "delete", (string?)body["action"]);
                    break;
                default:
                    AssertAudit(body);
                    break;
            }
        }

        var audited = received.Where(m => m.Subject == "$JS.EVENT.ADVISORY.API").Select(m => JsonNode.Parse(m.Data)!).ToList();
        Assert.Equal(
            ["$JS.API.STREAM.CREATE.S", "$JS.API.STREAM.UPDATE.S", "$JS.API.CONSUMER.CREATE.S.C", "$JS.API.CONSUMER.CREATE.S.D", "$JS.API.CONSUMER.DELETE.S.C", "$JS.API.STREAM.INFO.MISSING", "$JS.API.STREAM.DELETE.S"],
            audited.Select(a => (string?)a["subject"]));

        // The request is the payload as sent (left out when empty); the response is the reply as sent, errors included.
        Assert.Equal("S", (string?)JsonNode.Parse((string)audited[0]["request"]!)!["name"]);
        Assert.False(audited[4].AsObject().ContainsKey("request"));
        Assert.Equal(10059, (int)JsonNode.Parse((string)audited[5]["response"]!)!["error"]!["err_code"]!);
        Assert.True((bool)JsonNode.Parse((string)audited[6]["response"]!)!["success"]!);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Naked_and_terminated_messages_are_advised_with_nats_servers_keys(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("S", ["s"]) { Storage = StreamConfigStorage.Memory });
        await js.PublishAsync("s", "one");
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        await using var events = await connection.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.CONSUMER.*.S.C");
        await connection.PingAsync();

        var first = await consumer.NextAsync<string>();
        Assert.Equal("one", first?.Data);
        await first!.NakAsync();
        var received = await ReceiveAsync(events, 1);
        var second = await consumer.NextAsync<string>();
        Assert.Equal("one", second?.Data);
        await second!.AckTerminateAsync();
        received.AddRange(await ReceiveAsync(events, 1));
        Assert.Equal(["$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.S.C", "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.S.C"], received.Select(m => m.Subject));
        var naked = JsonNode.Parse(received[0].Data)!.AsObject();
        var terminated = JsonNode.Parse(received[1].Data)!.AsObject();
        foreach (var body in new[] { naked, terminated })
        {
            AssertTypedEvent(body);
            Assert.Equal([.. TypedEvent, "stream", "consumer", "consumer_seq", "stream_seq", "deliveries"], body.Select(p => p.Key));
            Assert.Equal(1UL, (ulong)body["stream_seq"]!);
        }

        Assert.Equal("io.nats.jetstream.advisory.v1.nak", (string?)naked["type"]);
        Assert.Equal((1UL, 1UL), ((ulong)naked["consumer_seq"]!, (ulong)naked["deliveries"]!));
        Assert.Equal("io.nats.jetstream.advisory.v1.terminated", (string?)terminated["type"]);
        Assert.Equal((2UL, 2UL), ((ulong)terminated["consumer_seq"]!, (ulong)terminated["deliveries"]!));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task An_account_sees_only_its_own_advisories(ServerKind kind)
    {
        const string conf = """
            accounts {
              A: { jetstream: enabled, users: [{user: a, password: a}] }
              B: { jetstream: enabled, users: [{user: b, password: b}] }
              C: { users: [{user: c, password: c}] }
            }
            """;
        await using var server = await JetStreamServer.StartAsync(kind, broker: Accounts, referenceConfig: conf);
        await using var a = new NatsConnection(new NatsOpts { Url = server.Url, AuthOpts = new NatsAuthOpts { Username = "a", Password = "a" } });
        await using var b = new NatsConnection(new NatsOpts { Url = server.Url, AuthOpts = new NatsAuthOpts { Username = "b", Password = "b" } });
        await using var eventsA = await a.SubscribeCoreAsync<string>("$JS.EVENT.>");
        await using var eventsB = await b.SubscribeCoreAsync<string>("$JS.EVENT.>");
        await a.PingAsync();
        await b.PingAsync();

        await new NatsJSContext(a).CreateStreamAsync(new StreamConfig("SA", ["a"]) { Storage = StreamConfigStorage.Memory });
        var received = await ReceiveAsync(eventsA, 2);
        Assert.Equal(["$JS.EVENT.ADVISORY.API", "$JS.EVENT.ADVISORY.STREAM.CREATED.SA"], received.Select(m => m.Subject).Order(StringComparer.Ordinal));
        Assert.Equal("A", (string?)JsonNode.Parse(received.Single(m => m.Subject.EndsWith(".API", StringComparison.Ordinal)).Data)!["client"]!["acc"]);

        // B's own stream is advised to B; nothing of A's reached B before it.
        await new NatsJSContext(b).CreateStreamAsync(new StreamConfig("SB", ["b"]) { Storage = StreamConfigStorage.Memory });
        Assert.Equal(["$JS.EVENT.ADVISORY.API", "$JS.EVENT.ADVISORY.STREAM.CREATED.SB"], (await ReceiveAsync(eventsB, 2)).Select(m => m.Subject).Order(StringComparer.Ordinal));
        await a.PingAsync();
        Assert.False(eventsA.Msgs.TryRead(out var leaked), leaked.Subject);

        // An account without JetStream has its 10039 answers audited too, in that account.
        await using var c = new NatsConnection(new NatsOpts { Url = server.Url, AuthOpts = new NatsAuthOpts { Username = "c", Password = "c" } });
        await using var eventsC = await c.SubscribeCoreAsync<string>("$JS.EVENT.>");
        await c.PingAsync();
        await c.RequestAsync<string, string>("$JS.API.INFO", "");
        var (subject, data) = Assert.Single(await ReceiveAsync(eventsC, 1));
        Assert.Equal("$JS.EVENT.ADVISORY.API", subject);
        var audit = JsonNode.Parse(data)!;
        Assert.Equal("C", (string?)audit["client"]!["acc"]);
        Assert.Equal(10039, (int)JsonNode.Parse((string)audit["response"]!)!["error"]!["err_code"]!);
    }

    private static void Accounts(BrokerOptions options)
    {
        options.Accounts.Add(new AccountOptions { Name = "A", Users = [new UserOptions { User = "a", Password = "a" }], JetStream = new AccountJetStreamOptions() });
        options.Accounts.Add(new AccountOptions { Name = "B", Users = [new UserOptions { User = "b", Password = "b" }], JetStream = new AccountJetStreamOptions() });
        options.Accounts.Add(new AccountOptions { Name = "C", Users = [new UserOptions { User = "c", Password = "c" }] });
    }

    private static void AssertTypedEvent(JsonObject body)
    {
        Assert.Matches("^[0-9A-Za-z]{22}$", (string?)body["id"]);
        var timestamp = (string)body["timestamp"]!;
        Assert.EndsWith("Z", timestamp, StringComparison.Ordinal);
        var at = DateTimeOffset.Parse(timestamp, CultureInfo.InvariantCulture);
        Assert.InRange(at, DateTimeOffset.UtcNow.AddMinutes(-1), DateTimeOffset.UtcNow.AddSeconds(5));
    }

    private static void AssertAudit(JsonObject body)
    {
        var keys = body.Select(p => p.Key).ToList();
        Assert.Equal([.. TypedEvent, "server", "client", "subject", .. keys.Contains("request") ? new[] { "request" } : [], "response"], keys);
        Assert.Equal("io.nats.jetstream.advisory.v1.api_audit", (string?)body["type"]);
        Assert.Matches("^N[A-Z0-9]{55}$", (string?)body["server"]);
        var client = body["client"]!.AsObject();
        Assert.Equal(["acc", "server"], client.Select(p => p.Key).Where(k => k != "rtt"));
        Assert.Equal("$G", (string?)client["acc"]);
        Assert.Equal((string?)body["server"], (string?)client["server"]);
        Assert.StartsWith("io.nats.jetstream.api.v1.", (string?)JsonNode.Parse((string)body["response"]!)!["type"], StringComparison.Ordinal);
    }

    /// <summary>Receives until <paramref name="count"/> messages (of those <paramref name="counted"/>, when given) arrived; then takes what else is there.</summary>
    private static async Task<List<(string Subject, string Data)>> ReceiveAsync(INatsSub<string> subscription, int count, Func<(string Subject, string Data), bool>? counted = null)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var received = new List<(string Subject, string Data)>();
        try
        {
            while (received.Count(m => counted?.Invoke(m) ?? true) < count)
            {
                var message = await subscription.Msgs.ReadAsync(timeout.Token);
                received.Add((message.Subject, message.Data!));
            }
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"{count} expected, received: {string.Join(", ", received.Select(m => m.Subject))}");
        }

        while (subscription.Msgs.TryRead(out var more))
        {
            received.Add((more.Subject, more.Data!));
        }

        return received;
    }
}
