using System.Text;
using Broker.Compare.Load;

namespace Broker.Bench.Tests.Compare;

/// <summary>
/// The load generator's frame parser decides whether a server "received every message", so it must count exactly
/// however the bytes are split across reads.
/// </summary>
public sealed class MessageScannerTests
{
    private const string Stream =
        "INFO {\"server_id\":\"x\"}\r\n"
        + "MSG bench.a 1 5\r\nhello\r\n"
        + "+OK\r\n"
        + "MSG bench.b 22 _INBOX.abc.r 4\r\nx\r\ny\r\n"
        + "PING\r\n"
        + "HMSG bench.c 3 reply.to 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"
        + "MSG bench.d 1 0\r\n\r\n"
        + "PONG\r\n";

    [Fact]
    public void Reads_every_frame_in_one_read()
    {
        var events = Scan([Encoding.ASCII.GetBytes(Stream)]);

        Assert.Equal(
            ["MSG - 5 hello", "MSG _INBOX.abc.r 4 x\r\ny", "PING", "MSG reply.to 14 NATS/1.0\r\n\r\nhi", "MSG - 0 ", "PONG"],
            events);
    }

    [Fact]
    public void Reads_the_same_frames_whatever_the_split()
    {
        var bytes = Encoding.ASCII.GetBytes(Stream);
        var expected = Scan([bytes]);
        for (var first = 1; first < bytes.Length; first++)
        {
            for (var second = first + 1; second < bytes.Length; second += 7)
            {
                var events = Scan([bytes[..first], bytes[first..second], bytes[second..]]);
                Assert.True(expected.SequenceEqual(events), $"split at {first} and {second}: {string.Join(" | ", events)}");
            }
        }
    }

    [Fact]
    public void Counts_without_copying_payloads_when_the_handler_does_not_want_them()
    {
        var bytes = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("MSG s 1 16\r\n0123456789abcdef\r\n", 1000)));
        var scanner = new MessageScanner();
        var handler = new Recorder(wantsPayload: false);
        for (var offset = 0; offset < bytes.Length; offset += 333)
        {
            scanner.Feed(bytes.AsSpan(offset, Math.Min(333, bytes.Length - offset)), ref handler);
        }

        Assert.Equal(1000, handler.Events.Count);
        Assert.All(handler.Events, e => Assert.Equal("MSG - 16 ", e));
    }

    [Theory]
    [InlineData("-ERR 'Slow Consumer'\r\n", "-ERR 'Slow Consumer'")]
    [InlineData("MSG s 1 x\r\n", "unexpected")]
    [InlineData("WHAT\r\n", "unexpected")]
    public void Fails_on_errors_and_garbage(string input, string message)
    {
        var error = Assert.Throws<InvalidOperationException>(() => Scan([Encoding.ASCII.GetBytes(input)]));

        Assert.Contains(message, error.Message, StringComparison.Ordinal);
    }

    private static List<string> Scan(IEnumerable<byte[]> reads)
    {
        var scanner = new MessageScanner();
        var handler = new Recorder(wantsPayload: true);
        foreach (var read in reads)
        {
            scanner.Feed(read, ref handler);
        }

        return handler.Events;
    }

    private struct Recorder(bool wantsPayload) : IScanHandler
    {
        public List<string> Events { get; } = [];

        public readonly bool WantsPayload => wantsPayload;

        public readonly void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload)
            => Events.Add($"MSG {(replyTo.IsEmpty ? "-" : Encoding.ASCII.GetString(replyTo))} {size} {Encoding.ASCII.GetString(payload)}");

        public readonly void OnPing() => Events.Add("PING");

        public readonly void OnPong() => Events.Add("PONG");
    }
}
