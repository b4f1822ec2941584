using System.Buffers;

namespace Broker.TestKit;

/// <summary>
/// Builds a multi-segment sequence, the shape a pipe hands the parser when input arrived in pieces. One source for the
/// parser tests (through this kit) and the parser benchmarks (which compile this file in: they do not reference the kit).
/// </summary>
public static class SegmentedSequence
{
    public static ReadOnlySequence<byte> Create(params IReadOnlyList<byte[]> segments)
    {
        if (segments.Count == 0)
        {
            return ReadOnlySequence<byte>.Empty;
        }

        var first = new Segment(segments[0], 0);
        var last = first;
        for (var i = 1; i < segments.Count; i++)
        {
            last = last.Append(segments[i]);
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
