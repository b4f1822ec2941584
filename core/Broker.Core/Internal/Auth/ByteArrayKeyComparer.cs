namespace Broker.Core.Internal.Auth;

/// <summary>
/// Compares <see cref="byte"/>[] dictionary keys by content, and lets a dictionary be probed with a
/// <see cref="ReadOnlySpan{T}"/> (<c>GetAlternateLookup</c>) so that looking up a subject straight out of the read
/// buffer allocates nothing; only adding a key copies it into an array.
/// </summary>
internal sealed class ByteArrayKeyComparer : IEqualityComparer<byte[]>, IAlternateEqualityComparer<ReadOnlySpan<byte>, byte[]>
{
    /// <summary>The shared instance (the comparer has no state).</summary>
    public static readonly ByteArrayKeyComparer Instance = new();

    private ByteArrayKeyComparer()
    {
    }

    /// <inheritdoc/>
    public bool Equals(byte[]? x, byte[]? y) =>
        ReferenceEquals(x, y) || (x is not null && y is not null && x.AsSpan().SequenceEqual(y));

    /// <inheritdoc/>
    public int GetHashCode(byte[] obj) => Hash(obj);

    /// <inheritdoc/>
    public bool Equals(ReadOnlySpan<byte> alternate, byte[] other) => alternate.SequenceEqual(other);

    /// <inheritdoc/>
    public int GetHashCode(ReadOnlySpan<byte> alternate) => Hash(alternate);

    /// <inheritdoc/>
    public byte[] Create(ReadOnlySpan<byte> alternate) => alternate.ToArray();

    // HashCode is seeded per process, so remote peers choosing subjects cannot aim at collisions.
    private static int Hash(ReadOnlySpan<byte> bytes)
    {
        var hash = default(HashCode);
        hash.AddBytes(bytes);
        return hash.ToHashCode();
    }
}
