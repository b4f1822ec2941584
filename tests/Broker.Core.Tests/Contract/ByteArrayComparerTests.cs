using Broker.Abstractions;

namespace Broker.Core.Tests.Contract;

/// <summary>The contract's byte-array comparer: content equality, and span lookups that find the same keys.</summary>
public sealed class ByteArrayComparerTests
{
    [Fact]
    public void Arrays_compare_by_content()
    {
        var comparer = ByteArrayComparer.Instance;

        byte[] key = [1, 2, 3];

        Assert.True(comparer.Equals(key, [1, 2, 3]));
        Assert.False(comparer.Equals(key, [1, 2]));
        Assert.False(comparer.Equals(key, (byte[]?)null));
        Assert.True(comparer.Equals((byte[]?)null, null));
        Assert.True(comparer.Equals((ReadOnlySpan<byte>)[1, 2, 3], key));
        Assert.Equal(comparer.GetHashCode(key), comparer.GetHashCode(new byte[] { 1, 2, 3 }));
        Assert.Equal(comparer.GetHashCode(key), comparer.GetHashCode((ReadOnlySpan<byte>)[1, 2, 3]));
    }

    [Fact]
    public void A_span_finds_and_adds_keys_of_a_dictionary()
    {
        var table = new Dictionary<byte[], int>(ByteArrayComparer.Instance) { ["foo.bar"u8.ToArray()] = 1 };
        var lookup = table.GetAlternateLookup<ReadOnlySpan<byte>>();

        Assert.True(lookup.TryGetValue("foo.bar"u8, out var found));
        Assert.Equal(1, found);
        Assert.False(lookup.ContainsKey("foo.baz"u8));
        Assert.True(lookup.TryAdd("foo.baz"u8, 2));
        Assert.Equal(2, table["foo.baz"u8.ToArray()]);
    }
}
