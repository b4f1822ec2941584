using System.Text;
using Broker.Adapters.Mqtt.Internal.Topics;

namespace Broker.Mqtt.Tests;

/// <summary>The topic/subject mapping, case for case as nats-server's TestMQTTTopicAndSubjectConversion and TestMQTTFilterConversion.</summary>
public sealed class TopicMappingTests
{
    public static TheoryData<string, string> Topics => new()
    {
        { "/", "/./" }, { "//", "/././" }, { "///", "/./././" }, { "////", "/././././" }, { "foo", "foo" },
        { "/foo", "/.foo" }, { "//foo", "/./.foo" }, { "///foo", "/././.foo" }, { "///foo/", "/././.foo./" },
        { "///foo//", "/././.foo././" }, { "///foo///", "/././.foo./././" }, { "//.foo.//", "/././/foo//././" },
        { "foo/bar", "foo.bar" }, { "/foo/bar", "/.foo.bar" }, { "/foo/bar/", "/.foo.bar./" },
        { "foo/bar/baz", "foo.bar.baz" }, { "/foo/bar/baz", "/.foo.bar.baz" }, { "/foo/bar/baz/", "/.foo.bar.baz./" },
        { "bar/", "bar./" }, { "bar//", "bar././" }, { "bar///", "bar./././" }, { "foo//bar", "foo./.bar" },
        { "foo///bar", "foo././.bar" }, { "foo////bar", "foo./././.bar" }, { ".", "//" }, { "..", "////" },
        { "...", "//////" }, { "./", "//./" }, { ".//.", "//././/" }, { "././.", "//.//.//" }, { "././/.", "//.//././/" },
        { ".foo", "//foo" }, { "foo.", "foo//" }, { ".foo.", "//foo//" }, { "foo../bar/", "foo////.bar./" },
        { "foo../bar/.", "foo////.bar.//" }, { "/foo/", "/.foo./" }, { "./foo/.", "//.foo.//" }, { "foo.bar/baz", "foo//bar.baz" },
    };

    public static TheoryData<string, string> Filters => new()
    {
        { "+", "*" }, { "/+", "/.*" }, { "+/", "*./" }, { "/+/", "/.*./" }, { "foo/+", "foo.*" }, { "foo/+/", "foo.*./" },
        { "foo/+/bar", "foo.*.bar" }, { "foo/+/+", "foo.*.*" }, { "foo/+/+/", "foo.*.*./" }, { "foo/+/+/bar", "foo.*.*.bar" },
        { "foo//+", "foo./.*" }, { "foo//+/", "foo./.*./" }, { "foo//+//", "foo./.*././" }, { "foo//+//bar", "foo./.*./.bar" },
        { "foo///+///bar", "foo././.*././.bar" }, { "foo.bar///+///baz", "foo//bar././.*././.baz" }, { "#", ">" },
        { "/#", "/.>" }, { "/foo/#", "/.foo.>" }, { "foo/#", "foo.>" }, { "foo//#", "foo./.>" }, { "foo///#", "foo././.>" },
        { "foo/bar/#", "foo.bar.>" }, { "foo/bar.baz/#", "foo.bar//baz.>" }, { "foo*/bar", "foo*.bar" }, { "foo>/bar", "foo>.bar" },
        { "foo/*/bar", "foo.*.bar" }, { "foo/*/bar/*", "foo.*.bar.*" }, { "foo/>", "foo.>" }, { "foo/*/bar/>", "foo.*.bar.>" },
    };

    [Theory]
    [MemberData(nameof(Topics))]
    public void Topic_maps_to_the_subject_nats_server_uses_and_back(string topic, string subject)
    {
        var bytes = Encoding.UTF8.GetBytes(topic);
        var buffer = new byte[TopicMapper.MaxSubjectLength(bytes.Length)];
        Assert.Equal(TopicStatus.Ok, TopicMapper.ToSubject(bytes, filter: false, buffer, out var written));
        Assert.Equal(subject, Encoding.UTF8.GetString(buffer, 0, written));

        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        Assert.Equal(topic.Length, TopicMapper.TopicLength(subjectBytes));
        var back = new byte[subjectBytes.Length];
        Assert.Equal(topic, Encoding.UTF8.GetString(back, 0, TopicMapper.ToTopic(subjectBytes, back)));
    }

    [Theory]
    [MemberData(nameof(Filters))]
    public void Filter_maps_to_the_subject_nats_server_subscribes(string filter, string subject)
    {
        Assert.Equal(TopicStatus.Ok, TopicMapper.FilterToSubject(filter, out var mapped));
        Assert.Equal(subject, mapped);
    }

    [Theory]
    [InlineData("foo/+", (int)TopicStatus.WildcardInTopicName)]
    [InlineData("foo/#", (int)TopicStatus.WildcardInTopicName)]
    [InlineData("foo bar", (int)TopicStatus.UnsupportedCharacter)]
    [InlineData("foo\u007fbar", (int)TopicStatus.UnsupportedCharacter)]
    [InlineData("foo\tbar", (int)TopicStatus.UnsupportedCharacter)]
    [InlineData("foo/*", (int)TopicStatus.NatsWildcardInTopicName)]
    [InlineData("foo/>/bar", (int)TopicStatus.NatsWildcardInTopicName)]
    public void Topic_names_nats_cannot_carry_are_refused(string topic, int expectedStatus)
    {
        var expected = (TopicStatus)expectedStatus;
        var bytes = Encoding.UTF8.GetBytes(topic);
        Assert.Equal(expected, TopicMapper.ToSubject(bytes, filter: false, new byte[TopicMapper.MaxSubjectLength(bytes.Length)], out _));
    }

    [Theory]
    [InlineData("foo.>", true)]
    [InlineData(">", false)]
    [InlineData("a.>", true)]
    [InlineData("foo.*", false)]
    public void Multi_level_filters_also_subscribe_their_parent(string subject, bool expected)
        => Assert.Equal(expected, TopicMapper.NeedsParentSubscription(subject));

    [Theory]
    [InlineData("a/#", "a", true)]
    [InlineData("a/#", "a/b/c", true)]
    [InlineData("a/+", "a/b", true)]
    [InlineData("a/+", "a", false)]
    [InlineData("a/+", "a/b/c", false)]
    [InlineData("+/+", "/b", true)]
    [InlineData("#", "$SYS/x", false)]
    [InlineData("+/x", "$SYS/x", false)]
    [InlineData("$SYS/#", "$SYS/x", true)]
    [InlineData("a/b", "a/b", true)]
    [InlineData("a/b", "a/b/", false)]
    public void Retained_messages_match_filters_as_the_specification_says(string filter, string topic, bool expected)
        => Assert.Equal(expected, TopicFilter.Matches(filter, topic));

    [Theory]
    [InlineData("a/#", true)]
    [InlineData("#", true)]
    [InlineData("a/b#", false)]
    [InlineData("a/#/b", false)]
    [InlineData("a+/b", false)]
    [InlineData("+", true)]
    [InlineData("a/+/b", true)]
    public void Filters_must_use_wildcards_for_whole_levels(string filter, bool valid)
        => Assert.Equal(valid, TopicMapper.IsValidFilter(Encoding.UTF8.GetBytes(filter)));
}
