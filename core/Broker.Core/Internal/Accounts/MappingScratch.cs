using System.Buffers.Text;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// A producer's own buffers for mapping the subjects it publishes: the mapped subject and the token boundaries of the
/// published one. One per client, made at its first mapped publish and reused, so mapping allocates nothing after.
/// </summary>
internal sealed class MappingScratch
{
    private byte[] buffer = new byte[128];
    private Range[] tokens = new Range[32];

    /// <summary>Bytes written since the last <see cref="Reset"/>.</summary>
    public int Length { get; private set; }

    /// <summary>What was written since the last <see cref="Reset"/>.</summary>
    public ReadOnlySpan<byte> Written => buffer.AsSpan(0, Length);

    public void Reset() => Length = 0;

    /// <summary>Splits <paramref name="subject"/> at each '.', empty tokens included, as nats-server tokenizes.</summary>
    public ReadOnlySpan<Range> Tokenize(ReadOnlySpan<byte> subject)
    {
        var count = subject.Count((byte)'.') + 1;
        if (count > tokens.Length)
        {
            tokens = new Range[Math.Max(count, tokens.Length * 2)];
        }

        var start = 0;
        var n = 0;
        for (var i = 0; i < subject.Length; i++)
        {
            if (subject[i] == (byte)'.')
            {
                tokens[n++] = new Range(start, i);
                start = i + 1;
            }
        }

        tokens[n++] = new Range(start, subject.Length);
        return tokens.AsSpan(0, n);
    }

    public void Append(ReadOnlySpan<byte> bytes)
    {
        Ensure(bytes.Length);
        bytes.CopyTo(buffer.AsSpan(Length));
        Length += bytes.Length;
    }

    public void Append(byte value)
    {
        Ensure(1);
        buffer[Length++] = value;
    }

    public void AppendNumber(uint value)
    {
        Ensure(10);
        Utf8Formatter.TryFormat(value, buffer.AsSpan(Length), out var written);
        Length += written;
    }

    private void Ensure(int more)
    {
        if (Length + more > buffer.Length)
        {
            Array.Resize(ref buffer, Math.Max(Length + more, buffer.Length * 2));
        }
    }
}
