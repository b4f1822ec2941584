using System.Buffers;
using System.Text;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Tests.Clients;

/// <summary>The MSG/HMSG frames a NATS connection writes, byte for byte, on both the single-span and the segmented path.</summary>
public sealed class MessageFrameTests
{
    [Theory]
    [InlineData(false, "", 0, 5, "MSG foo.bar 22 5\r\n")]
    [InlineData(false, "_INBOX.x", 0, 0, "MSG foo.bar 22 _INBOX.x 0\r\n")]
    [InlineData(true, "", 12, 17, "HMSG foo.bar 22 12 17\r\n")]
    [InlineData(true, "r", 12, 17, "HMSG foo.bar 22 r 12 17\r\n")]
    public void The_control_line(bool withHeaders, string reply, int headerLength, int totalLength, string expected)
    {
        var replyTo = Encoding.ASCII.GetBytes(reply);
        var span = new byte[MessageFrame.LineOverhead + 7 + 2 + replyTo.Length];
        var written = MessageFrame.WriteLine(span, withHeaders, "foo.bar"u8, "22"u8, replyTo, headerLength, totalLength);

        Assert.Equal(expected, Encoding.ASCII.GetString(span, 0, written));
    }

    [Theory]
    [InlineData(5)]
    [InlineData(MessageFrame.SingleSpanLimit * 2)]
    public async Task A_whole_frame_with_headers_in_one_span_or_segment_by_segment(int payloadLength)
    {
        var connection = new FakeConnection();
        var output = new ConnectionOutput(connection, connection.Transport.Output);
        var headers = new ReadOnlySequence<byte>("NATS/1.0\r\n\r\n"u8.ToArray());
        var payload = new ReadOnlySequence<byte>(Enumerable.Repeat((byte)'p', payloadLength).ToArray());
        var total = (int)headers.Length + payloadLength;
        var lineLength = MessageFrame.LineOverhead + 3 + 1;

        lock (output.Gate)
        {
            MessageFrame.Write(output, withHeaders: true, "foo"u8, "1"u8, default, headers, payload, (int)headers.Length, total, lineLength);
            output.Complete(default);
        }

        using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var bytes = new List<byte>();
        while (true)
        {
            var result = await connection.Transport.Input.ReadAsync(cancel.Token);
            bytes.AddRange(result.Buffer.ToArray());
            connection.Transport.Input.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted)
            {
                break;
            }
        }

        var expected = $"HMSG foo 1 12 {total}\r\nNATS/1.0\r\n\r\n{new string('p', payloadLength)}\r\n";
        Assert.Equal(expected, Encoding.ASCII.GetString(bytes.ToArray()));
    }
}
