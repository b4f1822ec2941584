using Broker.Core.Internal.Subscriptions;
using static Broker.Core.Tests.Subscriptions.ResultAssert;
using static Broker.Core.Tests.Subscriptions.SubscriptionFactory;

namespace Broker.Core.Tests.Subscriptions;

/// <summary>What a published subject matches: literal, <c>*</c>, <c>&gt;</c> and queue grouping (nats-server sublist_test.go).</summary>
public class SubListMatchTests
{
    private readonly SubList list = new();

    [Fact]
    public void Literal_subscription_matches_only_its_own_subject()
    {
        var sub = Plain("foo.bar.baz");
        Assert.True(list.Insert(sub));

        Plain(Match(list, "foo.bar.baz"), sub);
        NoQueues(Match(list, "foo.bar.baz"));
        Assert.Same(SubListResult.Empty, Match(list, "foo.bar"));
        Assert.Same(SubListResult.Empty, Match(list, "foo.bar.baz.qux"));
        Assert.Same(SubListResult.Empty, Match(list, "foo.bar.bax"));
        Assert.Same(SubListResult.Empty, Match(list, "FOO.bar.baz"));
    }

    [Fact]
    public void Single_token_subscription_does_not_match_two_token_subject()
    {
        var sub = Plain("foo");
        list.Insert(sub);

        Plain(Match(list, "foo"), sub);
        Assert.Empty(Match(list, "foo.bar").Plain);
    }

    [Fact]
    public void Star_matches_exactly_one_token_in_any_position()
    {
        var middle = Plain("foo.*.baz");
        var first = Plain("*.bar.baz");
        var last = Plain("foo.bar.*");
        var all = Plain("*.*.*");
        foreach (var sub in new[] { middle, first, last, all })
        {
            list.Insert(sub);
        }

        Plain(Match(list, "foo.bar.baz"), middle, first, last, all);
        Plain(Match(list, "foo.xyz.baz"), middle, all);
        Plain(Match(list, "abc.bar.baz"), first, all);
        Plain(Match(list, "foo.bar.xyz"), last, all);
        Assert.Empty(Match(list, "foo.baz").Plain);
        Assert.Empty(Match(list, "foo.bar.baz.qux").Plain);
    }

    [Fact]
    public void Full_wildcard_matches_one_or_more_trailing_tokens()
    {
        var foo = Plain("foo.>");
        var everything = Plain(">");
        var deep = Plain("foo.bar.>");
        list.Insert(foo);
        list.Insert(everything);
        list.Insert(deep);

        Plain(Match(list, "foo.bar"), foo, everything);
        Plain(Match(list, "foo.bar.baz.qux"), foo, everything, deep);
        Plain(Match(list, "foo"), everything);
        Plain(Match(list, "bar"), everything);
        Plain(Match(list, "foo.bar.baz"), foo, everything, deep);
    }

    [Fact]
    public void Mixed_wildcards_and_literals_each_match_once()
    {
        var literal = Plain("a.b.c.d");
        var star = Plain("a.b.*.d");
        var full = Plain("a.b.>");
        var starFull = Plain("*.b.>");
        var stars = Plain("a.*.*.*");
        var miss = Plain("a.b.*");
        foreach (var sub in new[] { literal, star, full, starFull, stars, miss })
        {
            list.Insert(sub);
        }

        Plain(Match(list, "a.b.c.d"), literal, star, full, starFull, stars);
        Plain(Match(list, "a.b.c"), full, starFull, miss);
        Plain(Match(list, "x.b.c.d.e"), starFull);
    }

    [Fact]
    public void Tokens_merely_containing_wildcard_characters_are_literals()
    {
        var starA = Plain("foo.*a");
        var gtDash = Plain("foo.>-");
        list.Insert(starA);
        list.Insert(gtDash);

        Assert.Same(SubListResult.Empty, Match(list, "foo.bar"));
        Assert.Same(SubListResult.Empty, Match(list, "foo.xa"));
        Plain(Match(list, "foo.*a"), starA);
        Plain(Match(list, "foo.>-"), gtDash);
    }

    [Fact]
    public void Published_wildcard_token_is_matched_by_wildcard_subscriptions_only()
    {
        var star = Plain("foo.*");
        var full = Plain("foo.>");
        var everything = Plain(">");
        var literal = Plain("foo.bar");
        var starA = Plain("foo.*a");
        foreach (var sub in new[] { star, full, everything, literal, starA })
        {
            list.Insert(sub);
        }

        // nats-server without pedantic: publishing to "foo.*" reaches the "foo.*" subscription, not "foo.bar".
        Plain(Match(list, "foo.*"), star, full, everything);

        // A published '>' token is one token to the trie, so "foo.*" takes it as well.
        Plain(Match(list, "foo.>"), star, full, everything);
    }

    [Fact]
    public void Subjects_with_empty_tokens_match_nothing_and_are_not_cached()
    {
        list.Insert(Plain(">"));
        list.Insert(Queue(">", "workers"));

        foreach (var subject in new[] { "", ".", ".foo", "..foo", "foo.", "foo..", "foo..bar", "foo...bar" })
        {
            Assert.Same(SubListResult.Empty, Match(list, subject));
        }

        Assert.Equal(0, list.CacheCount);
    }

    [Fact]
    public void Queue_subscriptions_are_grouped_by_queue_name()
    {
        var plain = Plain("foo");
        var bar1 = Queue("foo", "bar");
        var baz1 = Queue("foo", "baz");
        list.Insert(bar1);

        var result = Match(list, "foo");
        Assert.Empty(result.Plain);
        Queues(result, ("bar", [bar1]));

        list.Insert(baz1);
        list.Insert(plain);
        result = Match(list, "foo");
        Plain(result, plain);
        Queues(result, ("bar", [bar1]), ("baz", [baz1]));

        var bar2 = Queue("foo", "bar");
        var baz2 = Queue("foo", "baz");
        list.Insert(bar2);
        list.Insert(baz2);
        result = Match(list, "foo");
        Plain(result, plain);
        Queues(result, ("bar", [bar1, bar2]), ("baz", [baz1, baz2]));

        list.Remove(plain);
        list.Remove(bar1);
        result = Match(list, "foo");
        Assert.Empty(result.Plain);
        Queues(result, ("bar", [bar2]), ("baz", [baz1, baz2]));

        list.Remove(bar2);
        Queues(Match(list, "foo"), ("baz", [baz1, baz2]));

        list.Remove(baz1);
        list.Remove(baz2);
        Assert.Same(SubListResult.Empty, Match(list, "foo"));
    }

    [Fact]
    public void Members_of_one_queue_on_different_patterns_form_one_group()
    {
        var literal = Queue("orders.new", "workers");
        var star = Queue("orders.*", "workers");
        var full = Queue("orders.>", "workers");
        var other = Queue("orders.*", "audit");
        foreach (var sub in new[] { literal, star, full, other })
        {
            list.Insert(sub);
        }

        var result = Match(list, "orders.new");
        Assert.Empty(result.Plain);
        Queues(result, ("workers", [literal, star, full]), ("audit", [other]));
        Queues(Match(list, "orders.old"), ("workers", [star, full]), ("audit", [other]));
        Queues(Match(list, "orders.old.x"), ("workers", [full]));
    }

    [Fact]
    public void No_interest_returns_the_shared_empty_result()
    {
        Assert.Same(SubListResult.Empty, Match(list, "nobody.listens"));
        list.Insert(Plain("other"));
        Assert.Same(SubListResult.Empty, Match(list, "nobody.listens"));
        Assert.True(SubListResult.Empty.IsEmpty);
    }

    [Fact]
    public void Long_subjects_of_many_wildcard_tokens_match_without_recursion()
    {
        const int tokens = 5000;
        var pattern = string.Join('.', Enumerable.Repeat("*", tokens));
        var subject = string.Join('.', Enumerable.Repeat("a", tokens));
        var sub = Plain(pattern);
        list.Insert(sub);

        Plain(Match(list, subject), sub);
        Assert.True(list.Remove(sub));
        Assert.Equal(0, list.NodeCount());
    }
}
