namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// Decodes one Snappy block (google/snappy <c>format_description.txt</c>) with S2's extension (klauspost/compress
/// <c>s2/README.md</c>, "Format Extensions"): a 1-byte-offset copy whose offset is 0 repeats the last offset, its
/// length read from the tag's three bits (0-4: 4-8; 5: 8 + one byte; 6: 260 + two bytes; 7: 65540 + three bytes).
/// Plain Snappy blocks decode the same way, so one decoder reads what nats-server's <c>s2.NewWriter</c> writes.
/// </summary>
internal static class S2Block
{
    /// <summary>Decodes <paramref name="source"/> into <paramref name="destination"/> (grown when too small).</summary>
    /// <returns>The decoded length.</returns>
    /// <exception cref="InvalidDataException">The block is corrupt.</exception>
    public static int Decode(ReadOnlySpan<byte> source, ref byte[] destination)
    {
        var s = 0;
        if (!Varint.TryReadUnsigned(source, ref s, out var declared) || declared > SnappyFraming.S2MaxBlock)
        {
            throw Corrupt();
        }

        var length = (int)declared;
        if (length < 0)
        {
            throw Corrupt();
        }

        if (destination.Length < length)
        {
            destination = new byte[length];
        }

        var dst = destination.AsSpan(0, length);
        var d = 0;
        var lastOffset = 0;
        while (s < source.Length)
        {
            var tag = source[s];
            int copyLength;
            int offset;
            switch (tag & 3)
            {
                case 0:
                    var literal = tag >> 2;
                    s++;
                    if (literal >= 60)
                    {
                        var bytes = literal - 59;
                        literal = (int)ReadLittleEndian(source, ref s, bytes);
                    }

                    literal++;
                    if (literal <= 0 || s + literal > source.Length || d + literal > dst.Length)
                    {
                        throw Corrupt();
                    }

                    source.Slice(s, literal).CopyTo(dst[d..]);
                    s += literal;
                    d += literal;
                    continue;
                case 1:
                    if (s + 2 > source.Length)
                    {
                        throw Corrupt();
                    }

                    copyLength = (tag >> 2) & 7;
                    offset = ((tag & 0xe0) << 3) | source[s + 1];
                    s += 2;
                    if (offset == 0)
                    {
                        // S2's repeat: the last offset again, with a longer length.
                        offset = lastOffset;
                        copyLength = copyLength switch
                        {
                            5 => (int)ReadLittleEndian(source, ref s, 1) + 4,
                            6 => (int)ReadLittleEndian(source, ref s, 2) + 256,
                            7 => (int)ReadLittleEndian(source, ref s, 3) + 65536,
                            _ => copyLength,
                        };
                    }

                    copyLength += 4;
                    break;
                case 2:
                    copyLength = (tag >> 2) + 1;
                    s++;
                    offset = (int)ReadLittleEndian(source, ref s, 2);
                    break;
                default:
                    copyLength = (tag >> 2) + 1;
                    s++;
                    offset = (int)ReadLittleEndian(source, ref s, 4);
                    break;
            }

            if (offset <= 0 || offset > d || copyLength > dst.Length - d)
            {
                throw Corrupt();
            }

            lastOffset = offset;
            // Byte by byte: a copy may overlap what it writes (a run).
            for (var i = 0; i < copyLength; i++)
            {
                dst[d + i] = dst[d - offset + i];
            }

            d += copyLength;
        }

        return d == length ? length : throw Corrupt();
    }

    private static uint ReadLittleEndian(ReadOnlySpan<byte> source, ref int s, int bytes)
    {
        if (s + bytes > source.Length)
        {
            throw Corrupt();
        }

        uint value = 0;
        for (var i = 0; i < bytes; i++)
        {
            value |= (uint)source[s + i] << (8 * i);
        }

        s += bytes;
        return value;
    }

    private static InvalidDataException Corrupt() => new("corrupt snappy block");
}
