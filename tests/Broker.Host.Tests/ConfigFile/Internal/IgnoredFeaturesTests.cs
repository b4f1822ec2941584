using Broker.Host.Configuration.ConfigFile.Internal;
using static Broker.Host.Tests.ConfigFile.Internal.MapperTestKit;

namespace Broker.Host.Tests.ConfigFile.Internal;

public sealed class IgnoredFeaturesTests
{
    private readonly IgnoredFeatures ignored = new();
    private readonly ConfMappingBuilder output = new();

    [Fact]
    public void One_notice_per_feature_at_its_first_key_naming_every_key()
    {
        foreach (var entry in Entries("leafnodes {}\nsyslog: true\nleaf {}\nLEAFNODES {}"))
        {
            Assert.True(ignored.TryIgnore(entry));
        }

        ignored.Report(output);

        Assert.Equal(
            [
                "Unsupported test.conf:1:1: Leaf nodes: not supported yet, ignoring \"leafnodes\", \"leaf\", \"LEAFNODES\"",
                "Unsupported test.conf:2:1: Syslog: not supported yet, ignoring \"syslog\"",
            ],
            Diagnostics(Built(output)));
    }

    [Fact]
    public void Clustering_has_its_own_wording()
    {
        foreach (var entry in Entries("cluster {}\nconnect_error_reports: 1"))
        {
            ignored.TryIgnore(entry);
        }

        ignored.Report(output);

        Assert.Equal(
            ["Unsupported test.conf:1:1: Clustering: not offered (this broker runs as a single server), ignoring \"cluster\", \"connect_error_reports\""],
            Diagnostics(Built(output)));
    }

    [Fact]
    public void A_feature_ignored_by_name_joins_the_notices()
    {
        ignored.Ignore(Entry("tracing {}"), "Tracing");
        ignored.Report(output);

        Assert.Equal(["Unsupported test.conf:1:1: Tracing: not supported yet, ignoring \"tracing\""], Diagnostics(Built(output)));
    }

    [Fact]
    public void Other_keys_are_not_ignored_and_nothing_ignored_reports_nothing()
    {
        Assert.False(ignored.TryIgnore(Entry("port: 1")));

        ignored.Report(output);

        Assert.Empty(Built(output).Diagnostics);
    }
}
