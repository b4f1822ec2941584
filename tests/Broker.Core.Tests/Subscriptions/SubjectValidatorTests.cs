using Broker.Core.Internal.Subscriptions;
using static Broker.Core.Tests.Subscriptions.SubscriptionFactory;

namespace Broker.Core.Tests.Subscriptions;

/// <summary>Subject rules of nats-server sublist.go: validity, literals, wildcard detection and matching.</summary>
public class SubjectValidatorTests
{
    [Theory]
    [InlineData("foo", true)]
    [InlineData("foo.bar.*", true)]
    [InlineData("foo.bar.>", true)]
    [InlineData("*", true)]
    [InlineData(">", true)]
    [InlineData("*.>", true)]
    [InlineData("foo*", true)]
    [InlineData("foo.**", true)]
    [InlineData("foo.*bar", true)]
    [InlineData("foo>.bar", true)]
    [InlineData("foo.>>", true)]
    [InlineData(">bar", true)]
    [InlineData("", false)]
    [InlineData(".", false)]
    [InlineData(".foo", false)]
    [InlineData("foo.", false)]
    [InlineData("foo..bar", false)]
    [InlineData(">.bar", false)]
    [InlineData("foo.>.bar", false)]
    [InlineData("foo.>.", false)]
    [InlineData("foo bar", false)]
    [InlineData("foo.\tbar", false)]
    [InlineData("foo\r\n", false)]
    public void IsValidSubject(string subject, bool expected) =>
        Assert.Equal(expected, SubjectValidator.IsValidSubject(Bytes(subject)));

    [Theory]
    [InlineData("foo", true)]
    [InlineData("foo.bar", true)]
    [InlineData("foo*", true)]
    [InlineData("foo.**", true)]
    [InlineData("foo*bar", true)]
    [InlineData("*bar", true)]
    [InlineData("foo.>>", true)]
    [InlineData(">bar", true)]
    [InlineData("", false)]
    [InlineData(".foo", false)]
    [InlineData("foo.", false)]
    [InlineData("foo..bar", false)]
    [InlineData("foo.bar.*", false)]
    [InlineData("foo.bar.>", false)]
    [InlineData("*", false)]
    [InlineData(">", false)]
    [InlineData("foo.*.bar", false)]
    public void IsValidLiteralSubject(string subject, bool expected) =>
        Assert.Equal(expected, SubjectValidator.IsValidLiteralSubject(Bytes(subject)));

    [Theory]
    [InlineData("foo", false)]
    [InlineData("foo.bar", false)]
    [InlineData("foo*.bar", false)]
    [InlineData("foo.*bar", false)]
    [InlineData("foo>.bar", false)]
    [InlineData("foo.>bar", false)]
    [InlineData("*a.b>", false)]
    [InlineData("", false)]
    [InlineData("*", true)]
    [InlineData(">", true)]
    [InlineData("foo.*", true)]
    [InlineData("*.foo", true)]
    [InlineData("foo.*.bar", true)]
    [InlineData("foo.>", true)]
    [InlineData("foo*.*", true)]
    [InlineData("a*.b>.>", true)]
    public void HasWildcard(string subject, bool expected) =>
        Assert.Equal(expected, SubjectValidator.HasWildcard(Bytes(subject)));

    [Theory]
    [InlineData("foo", "foo", true)]
    [InlineData("foo", "bar", false)]
    [InlineData("*", "foo", true)]
    [InlineData(">", "foo", true)]
    [InlineData(">", "foo.bar", true)]
    [InlineData("foo.>", "foo.bar", true)]
    [InlineData("foo.>", "foo", false)]
    [InlineData("bar.>", "foo.bar", false)]
    [InlineData("stats.>", "stats.test.22", true)]
    [InlineData("stats.*.*", "stats.test.22", true)]
    [InlineData("foo", "foo.bar", false)]
    [InlineData("stats.test.foo", "stats.test.foos", false)]
    [InlineData("stats.test.*", "stats.test", false)]
    [InlineData("stats.*", "stats.test.foos", false)]
    [InlineData("stats.*.*.foos", "stats.test.foos", false)]
    [InlineData("*bar", "*bar", true)]
    [InlineData("foo*bar", "foo*bar", true)]
    [InlineData("foo.***.bar", "foo.***.bar", true)]
    [InlineData("foo.>>>.bar", "foo.>>>.bar", true)]
    [InlineData("foo.*a", "foo.xa", false)]
    // Wildcard tokens on the subject side: covered by the same wildcard or '>', never by a literal.
    [InlineData("foo.*", "foo.*", true)]
    [InlineData("foo.>", "foo.*", true)]
    [InlineData("foo.>", "foo.>", true)]
    [InlineData("foo.*", "foo.>", false)]
    [InlineData("foo.bar", "foo.*", false)]
    [InlineData("foo.*.baz", "foo.*.baz", true)]
    [InlineData("", "", false)]
    public void Matches(string pattern, string subject, bool expected) =>
        Assert.Equal(expected, SubjectValidator.Matches(Bytes(pattern), Bytes(subject)));

    [Theory]
    [InlineData("foo", "foo", true)]
    [InlineData("foo", "bar", false)]
    [InlineData("*", "foo", true)]
    [InlineData(">", "foo.bar", true)]
    [InlineData("foo.>", "foo", false)]
    [InlineData("stats.*.*", "stats.test.22", true)]
    [InlineData("stats.*", "stats.test.foos", false)]
    [InlineData("stats.test.*", "stats.test", false)]
    [InlineData("foo.*a", "foo.*a", true)]
    [InlineData("foo.*a", "foo.xa", false)]
    // Published wildcard tokens are opaque to the index: any pattern wildcard takes them, no literal does.
    [InlineData("foo.*", "foo.*", true)]
    [InlineData("foo.*", "foo.>", true)]
    [InlineData("foo.>", "foo.*", true)]
    [InlineData("foo.bar", "foo.*", false)]
    [InlineData(">", "", false)]
    [InlineData("*", "", false)]
    public void MatchesPublished(string pattern, string published, bool expected) =>
        Assert.Equal(expected, SubjectValidator.MatchesPublished(Bytes(pattern), Bytes(published)));

    [Theory]
    [InlineData("", 0)]
    [InlineData("foo", 1)]
    [InlineData("foo.bar", 2)]
    [InlineData("a.*.>", 3)]
    public void CountTokens(string subject, int expected) =>
        Assert.Equal(expected, SubjectValidator.CountTokens(Bytes(subject)));
}
