namespace Broker.Protocol.Tests;

/// <summary>CONNECT, PING/PONG, +OK/verbose and the op grammar, on both servers.</summary>
public sealed class ConnectAndPingTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Info_is_sent_first_with_the_fields_clients_need(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var client = await server.ConnectAsync();
        Assert.StartsWith("INFO {", client.Info, StringComparison.Ordinal);
        foreach (var field in new[] { "\"server_id\":", "\"version\":", "\"proto\":1", "\"headers\":true", "\"max_payload\":1048576", "\"client_id\":", "\"host\":", "\"port\":" })
        {
            Assert.Contains(field, client.Info, StringComparison.Ordinal);
        }
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Empty_connect_turns_verbose_on(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync("CONNECT {}\r\n");
        Assert.Equal(["+OK", "PONG"], transcript.Lines);
        Assert.False(transcript.Closed);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Verbose_is_on_before_connect(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync("SUB foo 1\r\nPUB foo 2\r\nhi\r\nUNSUB 1\r\n");
        Assert.Equal(["+OK", "+OK", "MSG foo 1 2", "hi", "+OK", "PONG"], transcript.Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Quiet_connection_gets_only_what_it_asks_for(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\nSUB foo 1\r\nPUB foo 2\r\nhi\r\nPUB foo reply 0\r\n\r\n");
        Assert.Equal(["MSG foo 1 2", "hi", "MSG foo 1 reply 0", "", "PONG"], transcript.Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Operations_are_case_insensitive_and_accept_tabs(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var client = await server.ConnectAsync();
        await client.SendAsync("connect {\"verbose\":false}\r\nsub\tfoo\t1\r\npUb\tfoo\t2\r\nhi\r\nping\r\n");
        Assert.Equal(["MSG foo 1 2", "hi", "PONG"], (await client.CollectUntilAsync("PONG")).Lines);
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Client_ok_and_info_are_ignored(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\n+OK\r\nINFO {}\r\n");
        Assert.Equal(["PONG"], transcript.Lines);
        Assert.False(transcript.Closed);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Client_pong_is_accepted(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\nPONG\r\n");
        Assert.Equal(["PONG"], transcript.Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Second_connect_applies_over_the_first(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\nCONNECT {\"verbose\":true}\r\nCONNECT {\"name\":\"x\"}\r\n");
        Assert.Equal(["+OK", "+OK", "PONG"], transcript.Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Echo_false_suppresses_own_messages(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var other = await server.ConnectAsync();
        await other.SendAsync("CONNECT {\"verbose\":false}\r\nSUB foo 9\r\n");
        Assert.Equal(["PONG"], (await other.PingAndCollectAsync()).Lines);

        var transcript = await server.RunAsync("CONNECT {\"verbose\":false,\"echo\":false}\r\nSUB foo 1\r\nPUB foo 2\r\nhi\r\n");
        Assert.Equal(["PONG"], transcript.Lines);
        Assert.Equal(["MSG foo 9 2", "hi", "PONG"], (await other.PingAndCollectAsync()).Lines);
    }
}
