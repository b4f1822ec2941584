using System.Text;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Tests.Subscriptions;

/// <summary>Assertions over <see cref="SubListResult"/> that ignore order, since the index promises none.</summary>
internal static class ResultAssert
{
    public static SubListResult Match(SubList list, string subject) => list.Match(SubscriptionFactory.Bytes(subject));

    public static void Plain(SubListResult result, params Subscription[] expected)
    {
        Assert.Equal(expected.Length, result.Plain.Length);
        foreach (var subscription in expected)
        {
            Assert.Contains(subscription, result.Plain);
        }
    }

    public static void NoQueues(SubListResult result) => Assert.Empty(result.Queues);

    /// <summary>The result holds exactly these groups, each with exactly these members.</summary>
    public static void Queues(SubListResult result, params (string Name, Subscription[] Members)[] expected)
    {
        Assert.Equal(expected.Length, result.Queues.Length);
        foreach (var (name, members) in expected)
        {
            var group = Assert.Single(result.Queues, g => Encoding.UTF8.GetString(g.Name) == name);
            Assert.Equal(members.Length, group.Members.Length);
            foreach (var member in members)
            {
                Assert.Contains(member, group.Members);
            }
        }
    }

    /// <summary>
    /// The result is exactly <paramref name="expected"/>: every plain one once, every queue member once in the group
    /// named after its queue, and no empty group.
    /// </summary>
    public static void Exactly(SubListResult result, IReadOnlyCollection<Subscription> expected, string because)
    {
        var seen = new HashSet<Subscription>(ReferenceEqualityComparer.Instance);
        foreach (var subscription in result.Plain)
        {
            Assert.True(subscription.Queue is null, because);
            Assert.True(seen.Add(subscription), $"{because}: {subscription} twice");
        }

        var names = new HashSet<string>();
        foreach (var group in result.Queues)
        {
            Assert.True(names.Add(Encoding.UTF8.GetString(group.Name)), $"{because}: group {Encoding.UTF8.GetString(group.Name)} twice");
            Assert.NotEmpty(group.Members);
            foreach (var member in group.Members)
            {
                Assert.True(member.Queue.AsSpan().SequenceEqual(group.Name), $"{because}: {member} in the wrong group");
                Assert.True(seen.Add(member), $"{because}: {member} twice");
            }
        }

        Assert.True(expected.Count == seen.Count, $"{because}: expected {expected.Count} subscriptions, got {seen.Count}");
        foreach (var subscription in expected)
        {
            Assert.True(seen.Contains(subscription), $"{because}: {subscription} missing");
        }
    }
}
