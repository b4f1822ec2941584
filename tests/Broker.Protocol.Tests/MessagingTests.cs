namespace Broker.Protocol.Tests;

/// <summary>Delivery semantics at the wire level: wildcards, queues, auto-unsubscribe, headers, no-responders.</summary>
public sealed class MessagingTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Wildcards_match_as_nats_defines_them(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync(
            "CONNECT {\"verbose\":false}\r\nSUB foo.* 1\r\nSUB foo.> 2\r\nSUB > 3\r\nSUB foo.bar.baz 4\r\n" +
            "PUB foo.bar.baz 1\r\na\r\n");
        Assert.Equal(Sorted(["MSG foo.bar.baz 2 1", "MSG foo.bar.baz 3 1", "MSG foo.bar.baz 4 1", "a", "a", "a", "PONG"]), Sorted(transcript.Lines));

        transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\nSUB foo.* 1\r\nSUB foo.> 2\r\nPUB foo 1\r\nb\r\nPUB foo.x 1\r\nc\r\n");
        Assert.Equal(Sorted(["MSG foo.x 1 1", "MSG foo.x 2 1", "PONG", "c", "c"]), Sorted(transcript.Lines));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Queue_group_delivers_each_message_to_one_member(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var input = "CONNECT {\"verbose\":false}\r\nSUB foo q 1\r\nSUB foo q 2\r\nSUB foo 3\r\n" + string.Concat(Enumerable.Repeat("PUB foo 1\r\nx\r\n", 20));
        var transcript = await server.RunAsync(input);
        var messages = transcript.Lines.Where(l => l.StartsWith("MSG", StringComparison.Ordinal)).ToList();
        Assert.Equal(20, messages.Count(m => m == "MSG foo 3 1"));
        Assert.Equal(20, messages.Count(m => m is "MSG foo 1 1" or "MSG foo 2 1"));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Unsub_with_max_stops_after_that_many(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync(
            "CONNECT {\"verbose\":false}\r\nSUB foo 1\r\nUNSUB 1 2\r\nPUB foo 1\r\na\r\nPUB foo 1\r\nb\r\nPUB foo 1\r\nc\r\n");
        Assert.Equal(["MSG foo 1 1", "a", "MSG foo 1 1", "b", "PONG"], transcript.Lines);

        // A max at or below what was delivered removes the subscription at once.
        transcript = await server.RunAsync(
            "CONNECT {\"verbose\":false}\r\nSUB foo 1\r\nPUB foo 1\r\na\r\nUNSUB 1 1\r\nPUB foo 1\r\nb\r\n");
        Assert.Equal(["MSG foo 1 1", "a", "PONG"], transcript.Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_publisher_sees_subscriptions_made_and_removed_between_its_publishes(ServerKind kind)
    {
        // The same subject again and again from one connection: what a per-connection match cache must not get wrong.
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var publisher = await server.ConnectAsync();
        await publisher.SendAsync("CONNECT {\"verbose\":false}\r\nPUB foo.bar 1\r\na\r\n");
        await publisher.PingAndCollectAsync();

        await using var subscriber = await server.ConnectAsync();
        await subscriber.SendAsync("CONNECT {\"verbose\":false}\r\nSUB foo.* 1\r\n");
        await subscriber.PingAndCollectAsync();
        await publisher.SendAsync("PUB foo.bar 1\r\nb\r\n");
        await publisher.PingAndCollectAsync();
        Assert.Equal(["MSG foo.bar 1 1", "b", "PONG"], (await subscriber.PingAndCollectAsync()).Lines);

        await subscriber.SendAsync("SUB foo.bar 2\r\n");
        await subscriber.PingAndCollectAsync();
        await publisher.SendAsync("PUB foo.bar 1\r\nc\r\n");
        await publisher.PingAndCollectAsync();
        Assert.Equal(Sorted(["MSG foo.bar 1 1", "MSG foo.bar 2 1", "c", "c", "PONG"]), Sorted((await subscriber.PingAndCollectAsync()).Lines));

        await subscriber.SendAsync("UNSUB 1\r\nUNSUB 2\r\n");
        await subscriber.PingAndCollectAsync();
        await publisher.SendAsync("PUB foo.bar 1\r\nd\r\n");
        await publisher.PingAndCollectAsync();
        Assert.Equal(["PONG"], (await subscriber.PingAndCollectAsync()).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Duplicate_sid_keeps_the_first_subscription(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\nSUB foo 1\r\nSUB bar 1\r\nPUB bar 1\r\nx\r\nPUB foo 1\r\ny\r\n");
        Assert.Equal(["MSG foo 1 1", "y", "PONG"], transcript.Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Headers_reach_header_clients_and_are_stripped_for_others(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var plain = await server.ConnectAsync();
        await plain.SendAsync("CONNECT {\"verbose\":false}\r\nSUB foo 1\r\n");
        await plain.PingAndCollectAsync();
        await using var modern = await server.ConnectAsync();
        await modern.SendAsync("CONNECT {\"verbose\":false,\"headers\":true}\r\nSUB foo 2\r\n");
        await modern.PingAndCollectAsync();

        var transcript = await server.RunAsync("CONNECT {\"verbose\":false,\"headers\":true}\r\nHPUB foo 18 23\r\nNATS/1.0\r\nA: b\r\n\r\nhello\r\n");
        Assert.Equal(["PONG"], transcript.Lines);
        Assert.Equal(["MSG foo 1 5", "hello", "PONG"], (await plain.PingAndCollectAsync()).Lines);
        Assert.Equal(["HMSG foo 2 18 23", "NATS/1.0", "A: b", "", "hello", "PONG"], (await modern.PingAndCollectAsync()).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task No_responders_sends_a_503_to_the_requester(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync(
            "CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true}\r\nSUB _INBOX.a.* 1\r\nPUB svc _INBOX.a.1 0\r\n\r\n");

        // nats-server 2.12+ adds Nats-Subject (we match that); Debian's 2.9.10 sends the bare status.
        string[] expected = kind == ServerKind.Ours
            ? ["HMSG _INBOX.a.1 1 35 35", "NATS/1.0 503", "Nats-Subject: svc", "", "", "PONG"]
            : ["HMSG _INBOX.a.1 1 16 16", "NATS/1.0 503", "", "", "PONG"];
        Assert.Equal(expected, transcript.Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task No_responders_is_silent_without_a_matching_own_subscription_or_when_someone_listens(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync(
            "CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true}\r\nPUB svc _INBOX.b.1 0\r\n\r\nSUB svc 1\r\nSUB _INBOX.b.* 2\r\nPUB svc _INBOX.b.2 0\r\n\r\n");
        Assert.Equal(["MSG svc 1 _INBOX.b.2 0", "", "PONG"], transcript.Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Operation_sent_a_byte_at_a_time_is_the_same_operation(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var client = await server.ConnectAsync();
        var input = "CONNECT {\"verbose\":false,\"headers\":true}\r\nSUB foo 1\r\nPUB foo r 2\r\nhi\r\nHPUB foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n";
        foreach (var b in System.Text.Encoding.ASCII.GetBytes(input))
        {
            await client.SendAsync([b]);
            await Task.Delay(1);
        }

        var transcript = await client.CollectUntilAsync("PONG");
        Assert.Equal(["MSG foo 1 r 2", "hi", "HMSG foo 1 12 14", "NATS/1.0", "", "hi", "PONG"], transcript.Lines);
    }

    private static List<string> Sorted(IEnumerable<string> lines) => [.. lines.Order(StringComparer.Ordinal)];
}
