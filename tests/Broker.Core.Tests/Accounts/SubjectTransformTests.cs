using System.Text;
using Broker.Core.Auth;
using Broker.Core.Internal.Accounts;

namespace Broker.Core.Tests.Accounts;

/// <summary>
/// Subject transforms and mappings, table-driven from nats-server 2.9.10's own cases (accounts_test.go
/// <c>TestSubjectTransforms</c>, <c>TestAccountMultiWeightedRouteMappings</c>) plus the functions' edges as its code
/// computes them; the refusal texts are the ones <c>nats-server -t</c> prints after "Error adding mapping ... : ".
/// </summary>
public sealed class SubjectTransformTests
{
    [Theory]
    [InlineData("foo", "bar", "foo", "bar")]
    [InlineData("foo.*.bar.*.baz", "req.$2.$1", "foo.A.bar.B.baz", "req.B.A")]
    [InlineData("baz.>", "my.pre.>", "baz.1.2.3", "my.pre.1.2.3")]
    [InlineData("baz.>", "foo.bar.>", "baz.1.2.3", "foo.bar.1.2.3")]
    [InlineData("*", "foo.bar.$1", "foo", "foo.bar.foo")]
    [InlineData("*", "{{splitfromleft(1,3)}}", "12345", "123.45")]
    [InlineData("*", "{{SplitFromRight(1,3)}}", "12345", "12.345")]
    [InlineData("*", "{{SliceFromLeft(1,3)}}", "1234567890", "123.456.789.0")]
    [InlineData("*", "{{SliceFromRight(1,3)}}", "1234567890", "1.234.567.890")]
    [InlineData("*", "{{split(1,-)}}", "-abc-def--ghi-", "abc.def.ghi")]
    [InlineData("*", "{{split(1,-)}}", "abc-def--ghi-", "abc.def.ghi")]
    [InlineData("*.*", "{{split(2,-)}}.{{splitfromleft(1,2)}}", "foo.-abc-def--ghij-", "abc.def.ghij.fo.o")]
    [InlineData("a.*.*", "b.{{wildcard(2)}}.{{ Wildcard( 1 ) }}", "a.x.y", "b.y.x")]
    [InlineData("a.*", "b.{{partition(10,1)}}.$1", "a.foo", "b.3.foo")]
    [InlineData("a.*", "b.{{Partition(10, 1)}}.$1", "a.bar", "b.2.bar")]
    [InlineData("a.*.*", "b.{{partition(7,1,2)}}.$1", "a.o1.o2", "b.3.o1")]
    [InlineData("a.*.>", "b.$1.>", "a.x.y.z", "b.x.y.z")]
    [InlineData("*", "{{splitFromLeft(1,0)}}", "abc", "abc")]
    [InlineData("*", "{{splitFromLeft(1,3)}}", "abc", "abc")]
    [InlineData("*", "{{sliceFromLeft(1,2)}}", "abcde", "ab.cd.e")]
    [InlineData("*", "{{sliceFromRight(1,2)}}", "abcde", "a.bc.de")]
    [InlineData("*", "{{sliceFromLeft(1,5)}}", "abcde", "abcde")]
    [InlineData("*", "{{split(1,ab)}}", "xabyabz", "x.y.z")]
    [InlineData("*", "{{split(1,)}}", "xyz", "x.y.z")]
    [InlineData("*", "x.$0", "abc", "x.abc")]
    [InlineData("a.*", "b.$x.$1", "a.c", "b.$x.c")]
    [InlineData("foo", "{{wildcard(1)}}", "foo", "{{wildcard(1)}}")]
    [InlineData("foo", "$1", "foo", "$1")]
    public void Maps_as_nats_server(string source, string destination, string subject, string expected)
    {
        var mapper = Mapper((source, [(destination, 100)]));
        Assert.Equal(expected, Map(mapper, subject));
    }

    [Theory]
    [InlineData("foo.*.*", "bar.$2", "invalid mapping destination: not using all of the token wildcard(s) in bar.$2")]
    [InlineData("foo", "", "invalid mapping destination: invalid subject in ")]
    [InlineData("foo..", "bar", "invalid subject")]
    [InlineData("foo.*", "bar.*", "invalid subject")]
    [InlineData("foo.*", "bar.$2", "invalid mapping destination: wildcard index out of range in $2: [2]")]
    [InlineData("foo.*", "bar.$1.>", "invalid subject")]
    [InlineData("foo.>", "bar.baz", "invalid subject")]
    [InlineData("foo.*", "foo.$foo", "invalid mapping destination: not using all of the token wildcard(s) in foo.$foo")]
    [InlineData("foo.*", "foo.{{wildcard(2)}}", "invalid mapping destination: wildcard index out of range in {{wildcard(2)}}: [2]")]
    [InlineData("foo.*", "foo.{{unimplemented(1)}}", "invalid mapping destination: unknown function in {{unimplemented(1)}}")]
    [InlineData("foo.*", "foo.{{partition(10)}}", "invalid mapping destination: not enough arguments passed to the function in {{partition(10)}}")]
    [InlineData("foo.*", "foo.{{wildcard(foo)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{wildcard(foo)}}")]
    [InlineData("foo.*", "foo.{{wildcard()}}", "invalid mapping destination: not enough arguments passed to the function in {{wildcard()}}")]
    [InlineData("foo.*", "foo.{{wildcard(1,2)}}", "invalid mapping destination: too many arguments passed to the function in {{wildcard(1,2)}}")]
    [InlineData("foo.*", "foo.{{ wildcard5) }}", "invalid mapping destination: unknown function in {{ wildcard5) }}")]
    [InlineData("foo.*", "foo.{{splitLeft(2,2}}", "invalid mapping destination: unknown function in {{splitLeft(2,2}}")]
    [InlineData("foo.*", "foo.{{WILDCARD(1)}}", "invalid mapping destination: unknown function in {{WILDCARD(1)}}")]
    [InlineData("foo.*", "foo.{{splitFromLeft(1)}}", "invalid mapping destination: not enough arguments passed to the function in {{splitFromLeft(1)}}")]
    [InlineData("foo.*", "foo.{{sliceFromRight(1,2,3)}}", "invalid mapping destination: too many arguments passed to the function in {{sliceFromRight(1,2,3)}}")]
    [InlineData("foo.*", "foo.{{split(1,a b)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{split(1,a b)}}")]
    [InlineData("foo.*", "bar.{{split(1,.)}}", "invalid mapping destination: not using all of the token wildcard(s) in bar.{{split(1,.)}}")]
    [InlineData("foo.*", "bar.{{partition(a,1)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{partition(a,1)}}")]
    [InlineData("foo.*", "bar.$1.{{wildcard(3)}}", "invalid mapping destination: wildcard index out of range in {{wildcard(3)}}: [3]")]
    [InlineData("foo", "bar baz", "invalid mapping destination: invalid subject")]
    [InlineData("a.*.*", "b.{{partition(7,1,2)}}", "invalid mapping destination: not using all of the token wildcard(s) in b.{{partition(7,1,2)}}")]
    [InlineData("foo bar", "baz", "invalid subject")]
    public void Refuses_as_nats_server(string source, string destination, string expected)
    {
        var ex = Assert.Throws<InvalidOperationException>(() => Mapper((source, [(destination, 100)])));
        Assert.Equal(expected, ex.Message);
    }

    [Fact]
    public void Refuses_weights_as_nats_server()
    {
        Assert.Equal("total weight needs to be <= 100", Assert.Throws<InvalidOperationException>(() => Mapper(("foo", [("a", 60), ("b", 60)]))).Message);
        Assert.Equal("individual weights need to be <= 100", Assert.Throws<InvalidOperationException>(() => Mapper(("foo", [("a", 101)]))).Message);
        Assert.Equal("duplicate entry for \"a\"", Assert.Throws<InvalidOperationException>(() => Mapper(("foo", [("a", 10), ("a", 10)]))).Message);
    }

    [Fact]
    public void A_subject_no_source_matches_keeps_its_bytes()
    {
        var mapper = Mapper(("foo.*", [("bar.$1", 100)]));
        var scratch = new MappingScratch();
        var subject = "other.x"u8.ToArray();
        var mapped = mapper.Map(subject, scratch);
        Assert.True(mapped.Overlaps(subject));
        Assert.Equal("foo.x.y", Map(mapper, "foo.x.y"));
    }

    [Fact]
    public void The_first_matching_mapping_wins_and_a_repeated_source_replaces_its_destinations()
    {
        var mapper = Mapper(("foo.*", [("one.$1", 100)]), ("foo.bar", [("two", 100)]), ("foo.*", [("three.$1", 100)]));
        Assert.Equal("three.bar", Map(mapper, "foo.bar"));
        Assert.Equal(2, mapper.Mappings.Count);
    }

    [Fact]
    public void Weighted_destinations_split_the_publishes_and_the_rest_keeps_the_subject()
    {
        var mapper = Mapper(("foo", [("a", 20), ("b", 30)]));
        var counts = new Dictionary<string, int>();
        for (var i = 0; i < 10_000; i++)
        {
            var subject = Map(mapper, "foo");
            counts[subject] = counts.GetValueOrDefault(subject) + 1;
        }

        Assert.Equal(["a", "b", "foo"], counts.Keys.Order());
        Assert.InRange(counts["a"], 1_700, 2_300);
        Assert.InRange(counts["b"], 2_700, 3_300);
        Assert.InRange(counts["foo"], 4_700, 5_300);
    }

    [Fact]
    public void A_source_listed_among_its_destinations_gets_no_remainder_and_the_rest_maps_to_nothing()
    {
        var mapper = Mapper(("foo", [("foo", 50)]));
        var empty = 0;
        for (var i = 0; i < 2_000; i++)
        {
            var subject = Map(mapper, "foo");
            Assert.True(subject is "foo" or "");
            empty += subject.Length == 0 ? 1 : 0;
        }

        Assert.InRange(empty, 800, 1_200);
    }

    [Fact]
    public void Cluster_scoped_destinations_are_checked_but_never_taken()
    {
        var options = new MappingOptions { Source = "foo", Destinations = [new() { Subject = "bar", Weight = 100, Cluster = "C1" }] };
        Assert.Equal("foo", Map(SubjectMapper.Create([options])!, "foo"));
        options.Destinations.Add(new() { Subject = "baz", Weight = 10, Cluster = "C2" });
        Assert.Equal("total weight needs to be <= 100", Assert.Throws<InvalidOperationException>(options.Validate).Message);
    }

    [Fact]
    public void No_mappings_is_null()
    {
        Assert.Null(SubjectMapper.Create([]));
        Assert.Null(SubjectMapper.Create(null));
    }

    [Fact]
    public void Long_subjects_grow_the_scratch()
    {
        var mapper = Mapper((">", [("x.>", 100)]));
        var subject = string.Join('.', Enumerable.Range(0, 100).Select(i => "token" + i));
        Assert.Equal("x." + subject, Map(mapper, subject));
    }

    private static SubjectMapper Mapper(params (string Source, (string Subject, int Weight)[] Destinations)[] mappings)
        => SubjectMapper.Create(mappings.Select(m => new MappingOptions
        {
            Source = m.Source,
            Destinations = [.. m.Destinations.Select(d => new MappingDestinationOptions { Subject = d.Subject, Weight = d.Weight })],
        }))!;

    private static string Map(SubjectMapper mapper, string subject)
        => Encoding.UTF8.GetString(mapper.Map(Encoding.UTF8.GetBytes(subject), new MappingScratch()));
}
