using System.Buffers;
using System.IO.Pipelines;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The connection's output as the packets see it: small packets are appended to one block of pipe memory and handed
/// to the pipe with one <see cref="PipeWriter.Advance"/> when the block is full or the output is flushed, instead of
/// one per packet (the pipe takes its lock in Advance, which producers and the send loop would contend for on every
/// message; the broker's NATS connections batch the same way). Used under the connection's write lock only.
/// </summary>
/// <remarks>
/// The base of <see cref="PacketOutput"/> rather than an object of its own: one per connection, it cost every session
/// 48 B more as a separate object (issue 25).
/// </remarks>
internal class BatchingWriter(PipeWriter pipe) : IBufferWriter<byte>
{
    // Blocks are asked for at least this size; a packet larger than what is left commits and starts a new one.
    private const int BlockSize = 4096;

    private Memory<byte> block;
    private int used;

    public PipeWriter Pipe => pipe;

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        sizeHint = Math.Max(sizeHint, 1);
        if (block.Length - used < sizeHint)
        {
            Commit();
            block = pipe.GetMemory(Math.Max(sizeHint, BlockSize));
        }

        return block[used..];
    }

    public Span<byte> GetSpan(int sizeHint = 0) => GetMemory(sizeHint).Span;

    public void Advance(int count) => used += count;

    /// <summary>Hands what was written to the pipe (before a flush or a completion).</summary>
    public void Commit()
    {
        if (used > 0)
        {
            pipe.Advance(used);
        }

        block = default;
        used = 0;
    }
}
