using System.Text;

namespace Broker.Compare.Load;

/// <summary>
/// Pipelined publishing: identical PUB frames laid end to end in one buffer of about 64 KiB, sent with as few
/// large writes as possible (nats bench's clients buffer the same way), so the load generator spends its time in
/// the kernel's send path rather than formatting.
/// </summary>
internal sealed class PublishFrames
{
    private const int TargetChunkBytes = 64 * 1024;

    private readonly byte[] chunk;
    private readonly int frameLength;
    private readonly int framesPerChunk;

    public PublishFrames(string subject, int payloadSize)
    {
        var frame = Encoding.ASCII.GetBytes($"PUB {subject} {payloadSize}\r\n")
            .Concat(Enumerable.Repeat((byte)'x', payloadSize))
            .Concat("\r\n"u8.ToArray())
            .ToArray();
        frameLength = frame.Length;
        framesPerChunk = Math.Max(1, TargetChunkBytes / frameLength);
        chunk = new byte[frameLength * framesPerChunk];
        for (var i = 0; i < framesPerChunk; i++)
        {
            frame.CopyTo(chunk, i * frameLength);
        }
    }

    /// <summary>Sends <paramref name="count"/> frames over <paramref name="socket"/>.</summary>
    public void Send(NatsSocket socket, long count)
    {
        var fullChunks = count / framesPerChunk;
        for (long i = 0; i < fullChunks; i++)
        {
            socket.Send(chunk);
        }

        var rest = (int)(count % framesPerChunk);
        if (rest > 0)
        {
            socket.Send(chunk.AsSpan(0, rest * frameLength));
        }
    }
}
