using System.Buffers;
using System.Text;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Tests.Protocol;

public sealed class ProtocolParserTests
{
    private const string EveryOperation =
        "CONNECT {\"verbose\":false,\"headers\":true}\r\n" +
        "SUB foo 1\r\n" +
        "SUB bar.* workers 2\r\n" +
        "PUB foo 5\r\nhello\r\n" +
        "PUB foo _INBOX.x 0\r\n\r\n" +
        "HPUB foo 12 17\r\nNATS/1.0\r\n\r\nhello\r\n" +
        "HPUB foo reply 12 12\r\nNATS/1.0\r\n\r\n\r\n" +
        "UNSUB 1\r\n" +
        "UNSUB 2 10\r\n" +
        "PING\r\nPONG\r\n+OK\r\nINFO {}\r\n" +
        "PUB bin 4\r\n\r\n\r\n\r\n";

    private static readonly string[] ExpectedOperations =
    [
        "CONNECT {\"verbose\":false,\"headers\":true}",
        "SUB foo [] 1",
        "SUB bar.* [workers] 2",
        "PUB foo [] hello",
        "PUB foo [_INBOX.x] ",
        "HPUB foo [] NATS/1.0\r\n\r\n|hello",
        "HPUB foo [reply] NATS/1.0\r\n\r\n|",
        "UNSUB 1 -1",
        "UNSUB 2 10",
        "PING",
        "PONG",
        "PUB bin [] \r\n\r\n",
    ];

    [Fact]
    public void Parses_every_operation_in_one_buffer()
    {
        var result = ParserHarness.Parse(EveryOperation);

        Assert.Equal(ParseStatus.NeedMoreData, result.Status);
        Assert.Equal(0, result.Unconsumed);
        Assert.Equal(ExpectedOperations, result.Ops);
    }

    [Fact]
    public void Gives_the_same_operations_when_split_at_every_byte()
    {
        var input = Encoding.Latin1.GetBytes(EveryOperation);
        foreach (var chunks in ParserHarness.EverySplit(input))
        {
            var result = ParserHarness.Feed(chunks);
            Assert.True(result.Ops.SequenceEqual(ExpectedOperations), $"split at {chunks[0].Length}: {string.Join(" | ", result.Ops)}");
            Assert.Equal(0, result.Unconsumed);
        }
    }

    [Fact]
    public void Gives_the_same_operations_when_split_three_ways()
    {
        var input = Encoding.Latin1.GetBytes(EveryOperation);
        foreach (var chunks in ParserHarness.EveryThreeWaySplit(input, step: 3))
        {
            var result = ParserHarness.Feed(chunks);
            Assert.True(result.Ops.SequenceEqual(ExpectedOperations), $"split at {chunks[0].Length}/{chunks[0].Length + chunks[1].Length}");
        }
    }

    [Fact]
    public void Gives_the_same_operations_when_fed_one_byte_at_a_time()
    {
        var input = Encoding.Latin1.GetBytes(EveryOperation);
        var result = ParserHarness.Feed([.. input.Select(b => new[] { b })]);
        Assert.Equal(ExpectedOperations, result.Ops);
    }

    [Theory]
    [InlineData("sub foo 1\r\npub foo 2\r\nhi\r\nping\r\n", "SUB foo [] 1", "PUB foo [] hi", "PING")]
    [InlineData("SuB foo 1\r\nPuB foo 2\r\nhi\r\nPiNg\r\n", "SUB foo [] 1", "PUB foo [] hi", "PING")]
    [InlineData("SUB\tfoo\tq\t1\r\nPUB\tfoo\t2\r\nhi\r\n", "SUB foo [q] 1", "PUB foo [] hi")]
    [InlineData("PUB   foo   reply   2  \r\nhi\r\n", "PUB foo [reply] hi")]
    [InlineData("PING\nPONG\n", "PING", "PONG")]
    [InlineData("PING with trailing words\r\n", "PING")]
    [InlineData("PINGX\r\n", "PING")]
    [InlineData("CONNECT{}\r\n", "CONNECT {}")]
    [InlineData("UNSUB 5 abc\r\n", "UNSUB 5 -1")]
    [InlineData("+OK\r\nINFO {\"a\":1}\r\nPING\r\n", "PING")]
    public void Accepts_what_nats_server_accepts(string input, params string[] expected)
    {
        var result = ParserHarness.Parse(input);
        Assert.Equal(ParseStatus.NeedMoreData, result.Status);
        Assert.Equal(expected, result.Ops);
    }

    [Theory]
    [InlineData("FOO\r\n", "UnknownOperation")]
    [InlineData("\r\n", "UnknownOperation")]
    [InlineData("MSG foo 1 2\r\nhi\r\n", "UnknownOperation")]
    [InlineData("PUBX foo 2\r\n", "UnknownOperation")]
    [InlineData("PUB\r\n", "UnknownOperation")]
    [InlineData("SUBfoo 1\r\n", "UnknownOperation")]
    [InlineData("-ERRfoo\r\n", "UnknownOperation")]
    [InlineData("PUB foo 5\r\nhelloX\r\n", "UnknownOperation")]
    [InlineData("PUB foo 2\r\nhi\n", "UnknownOperation")]
    [InlineData("PUB foo\r\n", "BadArguments")]
    [InlineData("PUB foo bar baz 2\r\n", "BadArguments")]
    [InlineData("PUB foo -1\r\n", "BadArguments")]
    [InlineData("PUB foo abc\r\n", "BadArguments")]
    [InlineData("PUB foo 1234567890\r\n", "BadArguments")]
    [InlineData("SUB foo\r\n", "BadArguments")]
    [InlineData("SUB a b c d\r\n", "BadArguments")]
    [InlineData("UNSUB\r\n", "UnknownOperation")]
    [InlineData("UNSUB \r\n", "BadArguments")]
    [InlineData("HPUB foo 5 2\r\n", "BadArguments")]
    [InlineData("HPUB foo 2\r\n", "BadArguments")]
    public void Rejects_bad_input_like_nats_server(string input, string expected)
    {
        var result = ParserHarness.Parse(input);
        Assert.Equal(ParseStatus.Error, result.Status);
        Assert.Equal(Enum.Parse<ProtocolError>(expected), result.Error);
    }

    [Fact]
    public void Dispatches_everything_before_the_bad_operation_and_stops_there()
    {
        var result = ParserHarness.Parse("SUB foo 1\r\nPUB foo 2\r\nhi\r\nBOGUS\r\nPING\r\n");
        Assert.Equal(ParseStatus.Error, result.Status);
        Assert.Equal(["SUB foo [] 1", "PUB foo [] hi"], result.Ops);
        Assert.Equal("BOGUS\r\nPING\r\n".Length, result.Unconsumed);
    }

    [Fact]
    public void Payload_over_max_payload_is_rejected_before_it_is_buffered()
    {
        var result = ParserHarness.Parse("PUB foo 2000\r\n", new ParserLimits(4096, 1024));
        Assert.Equal(ProtocolError.MaxPayloadExceeded, result.Error);

        result = ParserHarness.Parse("HPUB foo 10 2000\r\n", new ParserLimits(4096, 1024));
        Assert.Equal(ProtocolError.MaxPayloadExceeded, result.Error);
    }

    [Fact]
    public void Payload_at_max_payload_is_accepted()
    {
        var payload = new string('x', 1024);
        var result = ParserHarness.Parse($"PUB foo 1024\r\n{payload}\r\n", new ParserLimits(4096, 1024));
        Assert.Equal(ParseStatus.NeedMoreData, result.Status);
        Assert.Single(result.Ops);
    }

    [Fact]
    public void Control_line_over_the_limit_is_rejected_complete_or_not()
    {
        var limits = new ParserLimits(64, 1024);
        var longSubject = new string('a', 65);
        Assert.Equal(ProtocolError.MaxControlLineExceeded, ParserHarness.Parse($"SUB {longSubject} 1\r\n", limits).Error);

        // Without a newline the parser must not buffer without bound either.
        var unterminated = ParserHarness.Parse("SUB " + new string('a', 200), limits);
        Assert.Equal(ParseStatus.Error, unterminated.Status);
        Assert.Equal(ProtocolError.MaxControlLineExceeded, unterminated.Error);

        // An argument exactly at the limit is fine.
        var atLimit = "foo " + new string('b', 60);
        Assert.Equal(ParseStatus.NeedMoreData, ParserHarness.Parse($"SUB {atLimit}\r\n", limits).Status);
    }

    [Fact]
    public void Incomplete_operation_is_left_unconsumed()
    {
        var result = ParserHarness.Parse("PING\r\nPUB foo 5\r\nhel");
        Assert.Equal(["PING"], result.Ops);
        Assert.Equal("PUB foo 5\r\nhel".Length, result.Unconsumed);
    }

    [Fact]
    public void Only_connect_is_accepted_while_authentication_is_pending()
    {
        Assert.Equal(ProtocolError.AuthorizationViolation, ParserHarness.Parse("PING\r\n", connectRequired: true).Error);
        Assert.Equal(ProtocolError.AuthorizationViolation, ParserHarness.Parse("SUB foo 1\r\n", connectRequired: true).Error);
        Assert.Equal(ProtocolError.AuthorizationViolation, ParserHarness.Parse("\r\n", connectRequired: true).Error);
        var ok = ParserHarness.Parse("CONNECT {}\r\n", connectRequired: true);
        Assert.Equal(["CONNECT {}"], ok.Ops);
    }

    [Fact]
    public void Hpub_without_header_support_closes()
    {
        Assert.Equal(ProtocolError.HeadersNotSupported, ParserHarness.Parse("HPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\n", headers: false).Error);
    }

    [Fact]
    public void Stops_when_a_handler_asks_and_leaves_the_rest()
    {
        var log = new List<string>();
        var ops = new RecordingOps(log) { StopOn = "CONNECT" };
        var buffer = new ReadOnlySequence<byte>("PING\r\nCONNECT {}\r\nPING\r\n"u8.ToArray());
        var status = ProtocolParser.Parse(ref ops, ref buffer, ParserHarness.DefaultLimits, new byte[5000], out _);
        Assert.Equal(ParseStatus.Stopped, status);
        Assert.Equal(["PING", "CONNECT {}"], log);
        Assert.Equal("PING\r\n".Length, buffer.Length);
    }

    [Fact]
    public void Parse_size_matches_nats_server()
    {
        Assert.Equal(0, ControlLineParser.ParseSize("0"u8));
        Assert.Equal(999_999_999, ControlLineParser.ParseSize("999999999"u8));
        Assert.Equal(-1, ControlLineParser.ParseSize("1000000000"u8));
        Assert.Equal(-1, ControlLineParser.ParseSize(""u8));
        Assert.Equal(-1, ControlLineParser.ParseSize("1a"u8));
        Assert.Equal(-1, ControlLineParser.ParseSize("+1"u8));
    }
}
