using Broker.Adapters.Mqtt.Internal.Sessions;

namespace Broker.Mqtt.Tests.ConnectionParts;

/// <summary>
/// The subscriptions-by-filter table: one entry inline, a dictionary from the second on, with the same answers either
/// way (replace, remove, order of entries, ordinal comparison).
/// </summary>
public sealed class FilterTableTests
{
    [Fact]
    public void One_filter_is_found_replaced_and_removed()
    {
        var table = new FilterTable<string>();
        Assert.Equal(0, table.Count);
        Assert.False(table.TryGetValue("a/b", out _));

        table.Set("a/b", "first");
        table.Set("a/b", "second");
        Assert.Equal(1, table.Count);
        Assert.True(table.TryGetValue("a/b", out var found));
        Assert.Equal("second", found);
        Assert.False(table.ContainsKey("A/B"));
        Assert.Equal(["second"], table.ToArray());

        Assert.False(table.Remove("a/c"));
        Assert.True(table.Remove("a/b", out var removed));
        Assert.Equal("second", removed);
        Assert.Equal(0, table.Count);
        Assert.Empty(table.ToArray());
    }

    [Fact]
    public void Several_filters_keep_their_order_and_answer_as_one_does()
    {
        var table = new FilterTable<string>();
        table.Set("a", "1");
        table.Set("b", "2");
        table.Set("c", "3");
        table.Set("a", "1b");
        Assert.Equal(3, table.Count);
        Assert.Equal(["1b", "2", "3"], table.ToArray());

        Assert.True(table.Remove("b", out var removed));
        Assert.Equal("2", removed);
        Assert.True(table.Remove("a"));
        Assert.Equal(1, table.Count);
        Assert.True(table.TryGetValue("c", out var last));
        Assert.Equal("3", last);
        Assert.False(table.ContainsKey("a"));

        table.Clear();
        Assert.Equal(0, table.Count);
        table.Set("d", "4");
        Assert.Equal(["4"], table.ToArray());
    }
}
