using System.Buffers;
using System.Text;
using System.Text.Json;
using Broker.Core.Internal.Accounts;

namespace Broker.Core.Tests.Accounts;

/// <summary>
/// Header sampling of a tracked export decides as nats-server 2.9.10's <c>shouldSample</c> (accounts.go) for each tracing
/// header family, and a sampled request keeps the headers that decided it under their canonical names; a request is
/// sampled at rate 100 without reading its headers, and at <c>headers</c> only when they ask.
/// </summary>
public sealed class TraceHeadersTests
{
    [Theory]
    [InlineData("uber-trace-id: 479fefe9525eddb:5adb976bfc1f95c1:479fefe9525eddb:1\r\nuberctx-user: x\r\n", """{"Uber-Trace-Id":["479fefe9525eddb:5adb976bfc1f95c1:479fefe9525eddb:1"],"Uberctx-User":["x"]}""")]
    [InlineData("Uber-Trace-Id: 479fefe9525eddb:5adb976bfc1f95c1:479fefe9525eddb:03\r\n", """{"Uber-Trace-Id":["479fefe9525eddb:5adb976bfc1f95c1:479fefe9525eddb:03"]}""")]
    [InlineData("Uber-Trace-Id: 479fefe9525eddb:5adb976bfc1f95c1:479fefe9525eddb:0\r\n", null)]
    [InlineData("Uber-Trace-Id: 479fefe9525eddb:5adb976bfc1f95c1:1\r\n", null)]
    [InlineData("X-B3-Sampled: 1\r\nX-B3-TraceId: 80f198ee56343ba864fe8b2a57d3eff7\r\nX-B3-SpanId: e457b5a2e4d86bd1\r\nOther: y\r\n", """{"X-B3-Sampled":["1"],"X-B3-Spanid":["e457b5a2e4d86bd1"],"X-B3-Traceid":["80f198ee56343ba864fe8b2a57d3eff7"]}""")]
    [InlineData("X-B3-Sampled: 0\r\nX-B3-TraceId: 80f198ee56343ba864fe8b2a57d3eff7\r\n", null)]
    [InlineData("X-B3-TraceId: 80f198ee56343ba864fe8b2a57d3eff7\r\n", """{"X-B3-Traceid":["80f198ee56343ba864fe8b2a57d3eff7"]}""")]
    [InlineData("b3: 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90\r\n", """{"B3":["80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90"]}""")]
    [InlineData("b3: 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-0\r\n", null)]
    [InlineData("b3: 0\r\n", null)]
    [InlineData("traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\ntracestate: a=b\r\n", """{"Traceparent":["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],"Tracestate":["a=b"]}""")]
    [InlineData("traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00\r\n", null)]
    [InlineData("X-Other: 1\r\n", null)]
    public void Trace_headers_decide_as_nats_server_does(string lines, string? header)
    {
        var block = Encoding.ASCII.GetBytes("NATS/1.0\r\n" + lines + "\r\n");
        var latency = new ServiceLatency(0, "lat");

        var sampled = latency.ShouldSample(new ReadOnlySequence<byte>(block), out var kept);

        Assert.Equal(header is not null, sampled);
        Assert.Equal(header, kept is null ? null : JsonSerializer.Serialize(kept));

        // The same across segments.
        var split = Segments.Of(block, block.Length / 2);
        Assert.Equal(sampled, latency.ShouldSample(split, out _));
    }

    [Fact]
    public void Rate_100_samples_without_headers_and_headers_only_samples_nothing_plain()
    {
        Assert.True(new ServiceLatency(100, "lat").ShouldSample(ReadOnlySequence<byte>.Empty, out var header));
        Assert.Null(header);
        Assert.False(new ServiceLatency(0, "lat").ShouldSample(ReadOnlySequence<byte>.Empty, out _));
        Assert.False(new ServiceLatency(0, "lat").ShouldSample(new ReadOnlySequence<byte>("NATS/1.0\r\n\r\n"u8.ToArray()), out _));
    }

    private sealed class Segments : ReadOnlySequenceSegment<byte>
    {
        private Segments(ReadOnlyMemory<byte> memory, long index)
        {
            Memory = memory;
            RunningIndex = index;
        }

        public static ReadOnlySequence<byte> Of(byte[] bytes, int at)
        {
            var first = new Segments(bytes.AsMemory(0, at), 0);
            var second = new Segments(bytes.AsMemory(at), at);
            first.Next = second;
            return new ReadOnlySequence<byte>(first, 0, second, second.Memory.Length);
        }
    }
}
