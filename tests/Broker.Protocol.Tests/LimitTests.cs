namespace Broker.Protocol.Tests;

/// <summary>Configured limits: payload, control line, subscriptions, connections, keep-alive.</summary>
public sealed class LimitTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Payload_over_max_payload_is_refused_and_closed(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, o => o.MaxPayload = 16, "max_payload: 16");
        var ok = await server.RunAsync("CONNECT {\"verbose\":false}\r\nPUB foo 16\r\n0123456789abcdef\r\n");
        Assert.Equal(["PONG"], ok.Lines);

        var transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\nPUB foo 17\r\n");
        Assert.Equal(["-ERR 'Maximum Payload Violation'"], transcript.Lines);
        Assert.True(transcript.Closed);

        transcript = await server.RunAsync("CONNECT {\"verbose\":false,\"headers\":true}\r\nHPUB foo 12 17\r\n");
        Assert.Equal(["-ERR 'Maximum Payload Violation'"], transcript.Lines);
        Assert.True(transcript.Closed);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Info_reports_the_configured_max_payload(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, o => o.MaxPayload = 16, "max_payload: 16");
        await using var client = await server.ConnectAsync();
        Assert.Contains("\"max_payload\":16", client.Info, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Control_line_over_the_limit_is_refused_and_closed(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, o => o.MaxControlLine = 32, "max_control_line: 32");
        var transcript = await server.RunAsync("CONNECT {}\r\nSUB " + new string('a', 40) + " 1\r\n");
        Assert.Equal(["+OK", "-ERR 'maximum control line exceeded'"], transcript.Lines);
        Assert.True(transcript.Closed);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Subscriptions_over_the_limit_are_refused_but_the_connection_stays(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, o => o.MaxSubscriptions = 1, "max_subscriptions: 1");
        var transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\nSUB foo 1\r\nSUB bar 2\r\nPUB bar 1\r\nx\r\nPUB foo 1\r\ny\r\n");
        Assert.Equal(["-ERR 'maximum subscriptions exceeded'", "MSG foo 1 1", "y", "PONG"], transcript.Lines);
        Assert.False(transcript.Closed);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Connections_over_the_limit_get_info_then_an_error(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, o => o.MaxConnections = 1, "max_connections: 1");

        // The harness's readiness probe may still count for a moment after it closed (nats-server removes closed
        // clients asynchronously): the first connection is retried until the server has room for it.
        RawClient? admitted = null;
        for (var attempt = 0; admitted is null; attempt++)
        {
            var candidate = await server.ConnectAsync();
            await candidate.SendAsync("CONNECT {\"verbose\":false}\r\n");
            var lines = (await candidate.PingAndCollectAsync()).Lines;
            if (lines.SequenceEqual(["PONG"]))
            {
                admitted = candidate;
                break;
            }

            await candidate.DisposeAsync();
            Assert.True(attempt < 50, "never admitted: " + string.Join(" | ", lines));
            await Task.Delay(20);
        }

        await using var first = admitted;

        await using var second = await server.ConnectAsync();
        Assert.Equal(["-ERR 'maximum connections exceeded'"], await second.ExpectClosedAsync());

        // The first connection is unaffected.
        Assert.Equal(["PONG"], (await first.PingAndCollectAsync()).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Unanswered_pings_close_the_connection_as_stale(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.PingInterval = TimeSpan.FromMilliseconds(100);
                o.MaxPingsOutstanding = 1;
            },
            "ping_interval: \"100ms\"\nping_max: 1");
        await using var client = await server.ConnectAsync();
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
        var lines = await client.ExpectClosedAsync(TimeSpan.FromSeconds(5));
        Assert.Equal(["PING", "-ERR 'Stale Connection'"], lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Answered_pings_keep_the_connection(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.PingInterval = TimeSpan.FromSeconds(1);
                o.MaxPingsOutstanding = 2;
            },
            "ping_interval: \"1s\"\nping_max: 2");
        await using var client = await server.ConnectAsync();
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");

        // More pings than ping_max, each answered: the answers reset the count. An answer may take up to two intervals,
        // two seconds (a loaded machine deschedules the test's reader; 250 ms was seen to be too little), which
        // ping_max 2 allows on both servers.
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal("PING", await client.ReadLineAsync());
            await client.SendAsync("PONG\r\n");
        }

        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Subscriptions_with_too_many_tokens_are_refused(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, o => o.MaxSubTokens = 3, "max_sub_tokens: 3");
        var transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\nSUB a.b.c 1\r\nSUB a.b.c.d 2\r\nPUB a.b.c.d 1\r\nx\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Subscription to \"a.b.c.d\", too many tokens'", "PONG"], transcript.Lines);
        Assert.False(transcript.Closed);
    }
}
