namespace Broker.Abstractions;

/// <summary>
/// Walks the <c>Name: value</c> lines of a NATS header block in order, after its status line, without copying: names
/// and values are slices of the block. Lines without a name and a colon are skipped; values lose their leading spaces.
/// </summary>
public ref struct NatsHeaderReader
{
    private readonly ReadOnlySpan<byte> block;
    private int position;

    /// <summary>A reader positioned at the first header of <paramref name="block"/>.</summary>
    /// <param name="block">The header block (<c>NATS/1.0\r\n...</c>); empty reads nothing.</param>
    public NatsHeaderReader(ReadOnlySpan<byte> block)
    {
        this.block = block;
        position = FirstHeader(block);
    }

    /// <summary>Reads the next header.</summary>
    /// <param name="name">The header's name.</param>
    /// <param name="value">The header's value, leading spaces removed.</param>
    /// <returns><see langword="false"/> at the end of the block.</returns>
    public bool TryRead(out ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        while (position < block.Length)
        {
            var rest = block[position..];
            var end = rest.IndexOf("\r\n"u8);
            var line = end < 0 ? rest : rest[..end];
            position += end < 0 ? rest.Length : end + 2;
            var colon = line.IndexOf((byte)':');
            if (colon <= 0)
            {
                continue;
            }

            name = line[..colon];
            value = line[(colon + 1)..].TrimStart((byte)' ');
            return true;
        }

        name = default;
        value = default;
        return false;
    }

    /// <summary>Goes back to the first header.</summary>
    public void Reset() => position = FirstHeader(block);

    // The status line (NATS/1.0[ code]) carries no header.
    private static int FirstHeader(ReadOnlySpan<byte> block)
    {
        var end = block.IndexOf("\r\n"u8);
        return end < 0 ? block.Length : end + 2;
    }
}
