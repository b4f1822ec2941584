using Broker.Core.Internal;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// The registries of connected clients and connections give their grown buckets back once most entries have gone
/// (issue 25): a fresh dictionary holding exactly what is left, made when a quarter of the peak is left.
/// </summary>
public sealed class ShrinkingDictionaryTests
{
    [Fact]
    public void Falling_to_a_quarter_of_the_peak_copies_what_is_left_into_a_fresh_dictionary()
    {
        const int Peak = 4 * ShrinkingDictionary<int, string>.MinimumPeak;
        var map = new ShrinkingDictionary<int, string>();
        for (var i = 0; i < Peak; i++)
        {
            map.Set(i, "v" + i);
        }

        var grown = map.Current;
        for (var i = 0; i < (Peak * 3 / 4) - 1; i++)
        {
            Assert.True(map.TryRemove(i, out var value));
            Assert.Equal("v" + i, value);
        }

        Assert.Same(grown, map.Current);
        Assert.True(map.TryRemove((Peak * 3 / 4) - 1, out _));
        Assert.NotSame(grown, map.Current);
        Assert.Equal(1, map.Shrinks);
        Assert.Equal(Peak / 4, map.Current.Count);
        for (var i = Peak * 3 / 4; i < Peak; i++)
        {
            Assert.Equal("v" + i, map.Current[i]);
        }

        // The fresh one shrinks again at a quarter of its own peak, down to the minimum peak; adds go on as before.
        Assert.False(map.TryRemove(0, out _));
        for (var i = Peak * 3 / 4; i < Peak; i++)
        {
            Assert.True(map.TryRemove(i, out _));
        }

        Assert.Equal(2, map.Shrinks);
        Assert.Empty(map.Current);
        map.Set(Peak, "again");
        Assert.Equal("again", map.Current[Peak]);
        Assert.True(map.TryRemove(Peak, out _));
        Assert.Equal(2, map.Shrinks);
    }

    [Fact]
    public void Setting_an_existing_key_replaces_its_value_without_counting_it_twice()
    {
        var map = new ShrinkingDictionary<int, string>();
        for (var i = 0; i < ShrinkingDictionary<int, string>.MinimumPeak; i++)
        {
            map.Set(0, "v" + i);
        }

        Assert.Equal("v" + (ShrinkingDictionary<int, string>.MinimumPeak - 1), map.Current[0]);
        Assert.True(map.TryRemove(0, out _));
        Assert.Equal(0, map.Shrinks);
        Assert.Empty(map.Current);
    }
}
