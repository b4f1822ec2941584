namespace Broker.Core.Internal.Subscriptions;

/// <summary>
/// Makes <see cref="SubListResult"/> instances: gathers the nodes a trie walk reaches into one result (queue members
/// merged per queue name across nodes), and derives patched copies of cached results when a subscription comes or
/// goes. Results are shared with readers that hold no lock, so a patch never touches the arrays of the old result.
/// </summary>
internal sealed class SubListResultBuilder
{
    // Above this the scratch lists give memory back after a huge result instead of pinning it for the server's life.
    private const int RetainedCapacity = 4096;

    private readonly List<Subscription> plain = [];
    private readonly List<byte[]> queueNames = [];

    // Reused member lists; only the first queueNames.Count are in use.
    private readonly List<List<Subscription>> queueMembers = [];

    /// <summary>Adds every subscription of a node the walk reached.</summary>
    public void Add(SubListNode node)
    {
        node.CopyPlainTo(plain);

        if (node.Queues is not { } nodeQueues)
        {
            return;
        }

        foreach (var (name, members) in nodeQueues)
        {
            GroupFor(name).AddRange(members);
        }
    }

    /// <summary>The result gathered so far, or <see cref="SubListResult.Empty"/>; the builder is cleared for reuse.</summary>
    public SubListResult Build()
    {
        var result = SubListResult.Empty;
        if (plain.Count != 0 || queueNames.Count != 0)
        {
            var groups = new QueueGroup[queueNames.Count];
            for (var i = 0; i < groups.Length; i++)
            {
                groups[i] = new QueueGroup(queueNames[i], [.. queueMembers[i]]);
            }

            result = new SubListResult([.. plain], groups);
        }

        Clear();
        return result;
    }

    /// <summary>A copy of <paramref name="result"/> that also holds <paramref name="subscription"/>.</summary>
    public static SubListResult WithAdded(SubListResult result, Subscription subscription)
    {
        if (!SubList.IsQueue(subscription))
        {
            return new SubListResult([.. result.Plain, subscription], result.Queues);
        }

        var queues = result.Queues;
        var index = IndexOfGroup(queues, subscription.Queue!);
        if (index < 0)
        {
            return new SubListResult(result.Plain, [.. queues, new QueueGroup(subscription.Queue!, [subscription])]);
        }

        var patched = (QueueGroup[])queues.Clone();
        patched[index] = new QueueGroup(queues[index].Name, [.. queues[index].Members, subscription]);
        return new SubListResult(result.Plain, patched);
    }

    /// <summary>
    /// A copy of <paramref name="result"/> without <paramref name="subscription"/>; the same instance when it was not
    /// there, and <see cref="SubListResult.Empty"/> when nothing is left.
    /// </summary>
    public static SubListResult WithRemoved(SubListResult result, Subscription subscription)
    {
        if (!SubList.IsQueue(subscription))
        {
            var at = IndexOf(result.Plain, subscription);
            return at < 0 ? result : Create(Without(result.Plain, at), result.Queues);
        }

        var queues = result.Queues;
        var index = IndexOfGroup(queues, subscription.Queue!);
        var member = index < 0 ? -1 : IndexOf(queues[index].Members, subscription);
        if (member < 0)
        {
            return result;
        }

        var members = queues[index].Members;
        if (members.Length == 1)
        {
            // The group's last member left: the group itself goes, as the trie drops it too.
            return Create(result.Plain, Without(queues, index));
        }

        var patched = (QueueGroup[])queues.Clone();
        patched[index] = new QueueGroup(queues[index].Name, Without(members, member));
        return Create(result.Plain, patched);
    }

    private static SubListResult Create(Subscription[] plain, QueueGroup[] queues) =>
        plain.Length == 0 && queues.Length == 0 ? SubListResult.Empty : new SubListResult(plain, queues);

    // Results hold few groups, and a linear scan keeps iteration order stable for readers (nats-server findQSlot).
    private static int IndexOfGroup(QueueGroup[] queues, byte[] name)
    {
        for (var i = 0; i < queues.Length; i++)
        {
            if (queues[i].Name.AsSpan().SequenceEqual(name))
            {
                return i;
            }
        }

        return -1;
    }

    // By reference, as a loop, not Array.IndexOf: its shared comparer (ObjectEqualityComparer<__Canon>.IndexOf), called
    // here by the thousand only when a burst of clients leaves, loads System.Text.Encoding.CodePages and System.IO.Pipes
    // (~300 KB of file pages kept) when the tiering thread compiles it (issue 25; docs/benchmarks.md, leave3).
    private static int IndexOf(Subscription[] items, Subscription subscription)
    {
        for (var i = 0; i < items.Length; i++)
        {
            if (ReferenceEquals(items[i], subscription))
            {
                return i;
            }
        }

        return -1;
    }

    private static T[] Without<T>(T[] items, int index)
    {
        if (items.Length == 1)
        {
            return [];
        }

        var copy = new T[items.Length - 1];
        items.AsSpan(0, index).CopyTo(copy);
        items.AsSpan(index + 1).CopyTo(copy.AsSpan(index));
        return copy;
    }

    private List<Subscription> GroupFor(byte[] name)
    {
        for (var i = 0; i < queueNames.Count; i++)
        {
            if (queueNames[i].AsSpan().SequenceEqual(name))
            {
                return queueMembers[i];
            }
        }

        queueNames.Add(name);
        if (queueMembers.Count < queueNames.Count)
        {
            queueMembers.Add([]);
        }

        return queueMembers[queueNames.Count - 1];
    }

    private void Clear()
    {
        plain.Clear();
        if (plain.Capacity > RetainedCapacity)
        {
            plain.TrimExcess();
        }

        for (var i = 0; i < queueNames.Count; i++)
        {
            queueMembers[i].Clear();
            if (queueMembers[i].Capacity > RetainedCapacity)
            {
                queueMembers[i].TrimExcess();
            }
        }

        queueNames.Clear();
    }
}
