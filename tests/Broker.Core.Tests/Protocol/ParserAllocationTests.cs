using System.Buffers;
using System.Text;
using Broker.Core.Internal.Protocol;
using Broker.TestKit;

namespace Broker.Core.Tests.Protocol;

public sealed class ParserAllocationTests
{
    [Fact]
    public void Parsing_publishes_allocates_nothing()
    {
        var builder = new StringBuilder();
        for (var i = 0; i < 200; i++)
        {
            builder.Append("PUB foo.bar reply.to 16\r\n0123456789abcdef\r\nHPUB foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n");
        }

        var bytes = Encoding.ASCII.GetBytes(builder.ToString());
        var half = bytes.Length / 2;
        var whole = new ReadOnlySequence<byte>(bytes);
        var split = SegmentedSequence.Create(bytes[..half], bytes[half..]);
        var scratch = new byte[5000];
        var ops = new CountingOps();

        Run(ref ops, whole, scratch);
        Run(ref ops, split, scratch);
        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < 50; i++)
        {
            Run(ref ops, whole, scratch);
            Run(ref ops, split, scratch);
        }

        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
        Assert.Equal(102 * 600, ops.Count);
    }

    private static void Run(ref CountingOps ops, ReadOnlySequence<byte> buffer, byte[] scratch)
    {
        // No Assert here: the assertion library allocates, and this loop is what is measured.
        if (ProtocolParser.Parse(ref ops, ref buffer, ParserHarness.DefaultLimits, scratch, out _) != ParseStatus.NeedMoreData)
        {
            throw new InvalidOperationException("Parse failed.");
        }
    }

    private struct CountingOps : IProtocolOps
    {
        public int Count;

        public readonly bool ConnectRequired => false;

        public readonly bool HeadersEnabled => true;

        public bool OnConnect(ReadOnlySpan<byte> json) => ++Count > 0;

        public bool OnPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> payload) => ++Count > 0;

        public bool OnHPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) => ++Count > 0;

        public bool OnSub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid) => ++Count > 0;

        public bool OnUnsub(ReadOnlySpan<byte> sid, long max) => ++Count > 0;

        public bool OnPing() => ++Count > 0;

        public bool OnPong() => ++Count > 0;

        public bool OnErr(ReadOnlySpan<byte> message) => ++Count > 0;
    }
}
