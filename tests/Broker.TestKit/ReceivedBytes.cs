using System.Text;

namespace Broker.TestKit;

/// <summary>
/// What a test client received and has not consumed yet. Protocol lines (up to CRLF) or exact byte counts are taken
/// from the front, so a frame split across reads is read whole.
/// </summary>
public sealed class ReceivedBytes
{
    private byte[] data = new byte[4096];
    private int length;

    /// <summary>Bytes held.</summary>
    public int Length => length;

    public void Append(ReadOnlySpan<byte> bytes)
    {
        if (length + bytes.Length > data.Length)
        {
            Array.Resize(ref data, Math.Max(data.Length * 2, length + bytes.Length));
        }

        bytes.CopyTo(data.AsSpan(length));
        length += bytes.Length;
    }

    /// <summary>The first line without its CRLF (Latin-1 unless <paramref name="encoding"/> is given), or null when no whole line is held.</summary>
    public string? TakeLine(Encoding? encoding = null)
    {
        var index = data.AsSpan(0, length).IndexOf("\r\n"u8);
        if (index < 0)
        {
            return null;
        }

        var line = (encoding ?? Encoding.Latin1).GetString(data, 0, index);
        Consume(index + 2);
        return line;
    }

    /// <summary>The first <paramref name="count"/> bytes (at most <see cref="Length"/>).</summary>
    public byte[] Take(int count)
    {
        var taken = data.AsSpan(0, count).ToArray();
        Consume(count);
        return taken;
    }

    public void Clear() => length = 0;

    private void Consume(int count)
    {
        data.AsSpan(count, length - count).CopyTo(data);
        length -= count;
    }
}
