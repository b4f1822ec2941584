namespace Broker.Protocol.Tests;

/// <summary>
/// Every -ERR of the client protocol that needs no special configuration, and the malformed input nats-server
/// closes on without a word: the exact reply, and whether the socket stays open.
/// </summary>
public sealed class ErrorTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public static TheoryData<ServerKind, string, string[], bool> Cases()
    {
        var cases = new (string Input, string[] Lines, bool Closed)[]
        {
            ("FOO\r\n", ["-ERR 'Unknown Protocol Operation'"], true),
            ("MSG foo 1 2\r\nhi\r\n", ["-ERR 'Unknown Protocol Operation'"], true),
            ("\r\n", ["-ERR 'Unknown Protocol Operation'"], true),
            ("PUBX foo 2\r\nhi\r\n", ["-ERR 'Unknown Protocol Operation'"], true),
            ("UNSUB\r\n", ["-ERR 'Unknown Protocol Operation'"], true),
            ("CONNECT {\"verbose\":false}\r\nPUB foo 5\r\nhelloX\r\n", ["-ERR 'Unknown Protocol Operation'"], true),
            ("CONNECT {\"verbose\":false}\r\nPUB foo 2\r\nhi\n", ["-ERR 'Unknown Protocol Operation'"], true),
            ("PUB foo\r\n", [], true),
            ("PUB foo -1\r\n", [], true),
            ("PUB foo abc\r\n", [], true),
            ("PUB a b c 2\r\nhi\r\n", [], true),
            ("SUB foo\r\n", [], true),
            ("SUB a b c d\r\n", [], true),
            ("UNSUB 1 2 3\r\n", [], true),
            ("CONNECT {bad json\r\n", [], true),
            ("CONNECT\r\n", [], true),
            ("CONNECT {\"verbose\":\"yes\"}\r\n", [], true),
            ("HPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\n", [], true),
            ("CONNECT {\"verbose\":false,\"headers\":true}\r\nHPUB foo 5 2\r\nab\r\n", [], true),
            ("-ERR 'bye'\r\n", [], true),
            ("CONNECT {\"protocol\":2}\r\n", ["-ERR 'invalid client protocol'"], true),
            ("CONNECT {\"protocol\":-1}\r\n", ["-ERR 'invalid client protocol'"], true),
            ("CONNECT {\"no_responders\":true}\r\n", ["-ERR 'no responders requires headers support'"], true),
            ("CONNECT {\"verbose\":false}\r\nSUB foo..bar 1\r\n", ["-ERR 'Invalid Subject'", "PONG"], false),
            ("CONNECT {\"verbose\":false}\r\nSUB foo.>.bar 1\r\n", ["-ERR 'Invalid Subject'", "PONG"], false),
            ("CONNECT {}\r\nSUB .foo 1\r\n", ["+OK", "-ERR 'Invalid Subject'", "PONG"], false),
            ("CONNECT {\"verbose\":false,\"pedantic\":true}\r\nPUB foo.* 1\r\nx\r\n", ["-ERR 'Invalid Publish Subject'", "PONG"], false),
            ("CONNECT {\"verbose\":false,\"pedantic\":true}\r\nPUB foo..bar 1\r\nx\r\n", ["-ERR 'Invalid Publish Subject'", "PONG"], false),
            ("CONNECT {\"verbose\":false,\"pedantic\":false}\r\nPUB foo.* 1\r\nx\r\n", ["PONG"], false),
            ("CONNECT {\"verbose\":false}\r\nUNSUB 99\r\n", ["PONG"], false),
        };

        var data = new TheoryData<ServerKind, string, string[], bool>();
        foreach (var kind in new[] { ServerKind.Ours, ServerKind.Reference })
        {
            foreach (var (input, lines, closed) in cases)
            {
                data.Add(kind, input, lines, closed);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task Bad_input_gets_the_reference_reply(ServerKind kind, string input, string[] expectedLines, bool expectClosed)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync(input);
        var expected = expectedLines;
        Assert.True(
            expected.SequenceEqual(transcript.Lines) && transcript.Closed == expectClosed,
            $"{kind}: expected [{string.Join(" | ", expected)}]{(expectClosed ? " closed" : " open")}, got {transcript}");
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Pedantic_error_still_delivers_the_message(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var transcript = await server.RunAsync("CONNECT {\"verbose\":true,\"pedantic\":true}\r\nSUB foo.* 1\r\nPUB foo.* 1\r\nx\r\n");
        Assert.Equal(["+OK", "+OK", "-ERR 'Invalid Publish Subject'", "+OK", "MSG foo.* 1 1", "x", "PONG"], transcript.Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Messages_before_bad_input_are_delivered(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var subscriber = await server.ConnectAsync();
        await subscriber.SendAsync("CONNECT {\"verbose\":false}\r\nSUB foo 1\r\n");
        await subscriber.PingAndCollectAsync();

        var transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\nPUB foo 1\r\na\r\nPUB foo 1\r\nb\r\nBOGUS\r\nPUB foo 1\r\nc\r\n");
        Assert.Equal(["-ERR 'Unknown Protocol Operation'"], transcript.Lines);
        Assert.True(transcript.Closed);
        Assert.Equal(["MSG foo 1 1", "a", "MSG foo 1 1", "b", "PONG"], (await subscriber.PingAndCollectAsync()).Lines);
    }
}
