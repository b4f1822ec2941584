using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.TestKit;

namespace Broker.Core.Tests.Contract;

/// <summary>The contract's header-block reader, which the JetStream engine, the in-process client and the MQTT adapter share.</summary>
public sealed class NatsHeaderBlockTests
{
    private static byte[] Bytes(string text) => Encoding.ASCII.GetBytes(text);

    [Theory]
    [InlineData("NATS/1.0 503\r\n\r\n", 503)]
    [InlineData("NATS/1.0 408 Request Timeout\r\n\r\n", 408)]
    [InlineData("NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 3\r\n\r\n", 100)]
    [InlineData("NATS/1.0\r\nA: b\r\n\r\n", 0)]
    [InlineData("NATS/1.0 50\r\n\r\n", 0)]
    [InlineData("", 0)]
    public void Status_code_of_the_first_line(string block, int expected)
    {
        Assert.Equal(expected, NatsHeaderBlock.StatusCode(Bytes(block)));
        Assert.Equal(expected, NatsHeaderBlock.StatusCode(new ReadOnlySequence<byte>(Bytes(block))));
    }

    [Fact]
    public void Status_code_read_across_segments()
    {
        var block = SegmentedSequence.Create(Bytes("NATS/1"), Bytes(".0 5"), Bytes("03\r\n\r\n"));

        Assert.Equal(503, NatsHeaderBlock.StatusCode(block));
        Assert.True(NatsHeaderBlock.IsNoResponders(block));
        Assert.False(NatsHeaderBlock.IsNoResponders(SegmentedSequence.Create(Bytes("NATS/1.0 40"), Bytes("8\r\n\r\n"))));
        Assert.False(NatsHeaderBlock.IsNoResponders(ReadOnlySequence<byte>.Empty));
    }

    [Fact]
    public void Value_is_found_by_exact_name_and_trimmed()
    {
        var block = Bytes("NATS/1.0\r\nnats-msg-id: lower\r\nNats-Msg-Id:  abc  \r\nNats-Msg-Id: second\r\nNats-Msg-Id-Long: x\r\n\r\n");

        Assert.True(NatsHeaderBlock.TryGetValue(block, "Nats-Msg-Id"u8, out var value));
        Assert.Equal("abc", Encoding.ASCII.GetString(value));
        Assert.True(NatsHeaderBlock.TryGetValue(block, "Nats-Msg-Id-Long"u8, out value));
        Assert.Equal("x", Encoding.ASCII.GetString(value));
        Assert.False(NatsHeaderBlock.TryGetValue(block, "Nats-Msg"u8, out _));
        Assert.False(NatsHeaderBlock.TryGetValue(Bytes("NATS/1.0 503\r\n\r\n"), "NATS/1.0 503"u8, out _));
        Assert.False(NatsHeaderBlock.TryGetValue([], "A"u8, out _));
    }

    [Fact]
    public void Reader_walks_headers_in_order_skips_malformed_lines_and_rewinds()
    {
        var reader = new NatsHeaderReader(Bytes("NATS/1.0\r\nA: 1\r\nno colon\r\n: nameless\r\nB:2\r\nC:   spaced \r\n\r\n"));
        var seen = new List<string>();
        for (var pass = 0; pass < 2; pass++)
        {
            while (reader.TryRead(out var name, out var value))
            {
                seen.Add($"{Encoding.ASCII.GetString(name)}={Encoding.ASCII.GetString(value)}");
            }

            reader.Reset();
        }

        Assert.Equal(["A=1", "B=2", "C=spaced ", "A=1", "B=2", "C=spaced "], seen);
    }
}
