namespace Broker.Storage.FileStore.Internal.Format;

/// <summary>
/// Walks the valid records of a block's bytes. A record that fails its checksum is skipped by searching forward for
/// the next position where a valid record starts (resynchronising), so one damaged record costs only itself; the
/// search first checks the length and kind fields, so a garbage tail costs little. Zeros end the walk.
/// </summary>
internal ref struct RecordScanner
{
    private readonly ReadOnlySpan<byte> data;
    private int position;

    public RecordScanner(ReadOnlySpan<byte> data) => this.data = data;

    /// <summary>Where the last valid record returned ends: the length of the good prefix when nothing follows.</summary>
    public int ValidEnd { get; private set; }

    /// <summary>Bytes skipped as corrupt between valid records (not counting a torn or garbage tail).</summary>
    public int SkippedBytes { get; private set; }

    public bool Next(out RecordHeader header, out int offset)
    {
        var skipped = 0;
        while (position < data.Length)
        {
            var rest = data[position..];
            if (RecordFormat.TryRead(rest, out header))
            {
                offset = position;
                position += header.Length;
                ValidEnd = position;
                SkippedBytes += skipped;
                return true;
            }

            if (skipped == 0 && rest.IndexOfAnyExcept((byte)0) < 0)
            {
                break;
            }

            position++;
            skipped++;
        }

        header = default;
        offset = 0;
        return false;
    }
}
