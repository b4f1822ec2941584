namespace Broker.Abstractions;

/// <summary>
/// Compares byte arrays by content, and byte spans against byte arrays, so that dictionaries keyed by
/// <see cref="byte"/>[] (subjects, tokens, queue names, permission subjects) can be probed with a span from the read
/// buffer without allocating a key: <c>GetAlternateLookup&lt;ReadOnlySpan&lt;byte&gt;&gt;()</c>. Only adding a key
/// copies it into an array. The core, the stores and the adapters share this one.
/// </summary>
public sealed class ByteArrayComparer : IEqualityComparer<byte[]>, IAlternateEqualityComparer<ReadOnlySpan<byte>, byte[]>
{
    /// <summary>The shared instance (the comparer has no state).</summary>
    public static readonly ByteArrayComparer Instance = new();

    private ByteArrayComparer()
    {
    }

    /// <inheritdoc/>
    public bool Equals(byte[]? x, byte[]? y)
    {
        if (ReferenceEquals(x, y))
        {
            return true;
        }

        return x is not null && y is not null && x.AsSpan().SequenceEqual(y);
    }

    /// <inheritdoc/>
    public int GetHashCode(byte[] obj)
    {
        ArgumentNullException.ThrowIfNull(obj);
        return GetHashCode(obj.AsSpan());
    }

    /// <inheritdoc/>
    public bool Equals(ReadOnlySpan<byte> alternate, byte[] other) => other is not null && alternate.SequenceEqual(other);

    /// <inheritdoc/>
    // HashCode is seeded per process, so remote peers cannot choose subjects that collide in our tables.
    public int GetHashCode(ReadOnlySpan<byte> alternate)
    {
        var hash = default(HashCode);
        hash.AddBytes(alternate);
        return hash.ToHashCode();
    }

    /// <inheritdoc/>
    public byte[] Create(ReadOnlySpan<byte> alternate) => alternate.ToArray();
}
