using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Tests.Subscriptions;

/// <summary>
/// The one-member forms of a client's sid table and of a subject index node (issue 25): the first subscription is
/// kept in a field and a collection made from the second on, so both must behave the same across that change.
/// </summary>
public sealed class OneMemberTests
{
    [Fact]
    public void The_sid_table_finds_removes_and_lists_across_its_change_to_a_dictionary()
    {
        var table = default(SidTable);
        var first = SubscriptionFactory.Plain("a");
        var second = SubscriptionFactory.Plain("b");

        table.Add(first);
        Assert.Equal(1, table.Count);
        Assert.True(table.TryGetValue(first.SidString, out var found));
        Assert.Same(first, found);
        Assert.False(table.ContainsKey(second.SidString));

        table.Add(second);
        Assert.Equal(2, table.Count);
        Assert.True(table.ContainsKey(first.SidString));
        Assert.True(table.ContainsKey(second.SidString));
        Assert.Equal([first, second], table.ToArray().OrderBy(s => s.SidString == first.SidString ? 0 : 1));

        table.Remove(first.SidString);
        Assert.Equal(1, table.Count);
        Assert.False(table.ContainsKey(first.SidString));
        Assert.Same(second, Assert.Single(table.ToArray()));

        // Removing an unknown sid, or the last one, leaves a table that still works.
        table.Remove("nope");
        table.Remove(second.SidString);
        Assert.Equal(0, table.Count);
        Assert.Empty(table.ToArray());

        table.Add(first);
        Assert.True(table.ContainsKey(first.SidString));
        table.Clear();
        Assert.Equal(0, table.Count);
    }

    [Fact]
    public void The_single_entry_removes_only_its_own_sid()
    {
        var table = default(SidTable);
        var only = SubscriptionFactory.Plain("a");
        table.Add(only);

        table.Remove(only.SidString + "0");

        Assert.Equal(1, table.Count);
        Assert.False(table.TryGetValue(only.SidString + "0", out _));
    }

    [Fact]
    public void A_node_keeps_one_or_many_plain_subscriptions_and_refuses_the_same_instance_twice()
    {
        var node = new SubListNode();
        var first = SubscriptionFactory.Plain("a");
        var second = SubscriptionFactory.Plain("a");

        Assert.True(node.IsEmpty);
        Assert.True(node.Add(first));
        Assert.False(node.Add(first));
        Assert.False(node.IsEmpty);
        Assert.Equal([first], Plain(node));

        Assert.True(node.Add(second));
        Assert.False(node.Add(second));
        Assert.False(node.Add(first));
        Assert.Equal(2, Plain(node).Count);

        Assert.True(node.Remove(first));
        Assert.False(node.Remove(first));
        Assert.Equal([second], Plain(node));
        Assert.True(node.Remove(second));
        Assert.True(node.IsEmpty);
        Assert.Empty(Plain(node));
    }

    [Fact]
    public void A_node_with_one_subscription_empties_when_it_goes()
    {
        var node = new SubListNode();
        var only = SubscriptionFactory.Plain("a");
        var other = SubscriptionFactory.Plain("a");

        node.Add(only);
        Assert.False(node.Remove(other));
        Assert.True(node.Remove(only));

        Assert.True(node.IsEmpty);
        Assert.Empty(Plain(node));
    }

    private static List<Subscription> Plain(SubListNode node)
    {
        var all = new List<Subscription>();
        node.CopyPlainTo(all);
        return all;
    }
}
