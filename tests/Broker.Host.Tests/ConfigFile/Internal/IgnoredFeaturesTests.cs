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
        foreach (var entry in Entries("log_size_limit: 1\nsyslog: true\nlogfile_size_limit: 1\nLOG_SIZE_LIMIT: 1"))
        {
            Assert.True(ignored.TryIgnore(entry));
        }

        ignored.Report(output);

        Assert.Equal(
            [
                "Unsupported test.conf:1:1: Log file rotation: not supported yet, ignoring \"log_size_limit\", \"logfile_size_limit\", \"LOG_SIZE_LIMIT\"",
                "Unsupported test.conf:2:1: Syslog: not supported yet, ignoring \"syslog\"",
            ],
            Diagnostics(Built(output)));
    }

    [Fact]
    public void Route_error_reports_are_one_notice()
    {
        foreach (var entry in Entries("connect_error_reports: 1\nreconnect_error_reports: 1"))
        {
            ignored.TryIgnore(entry);
        }

        ignored.Report(output);

        Assert.Equal(
            ["Unsupported test.conf:1:1: Connect error reports: not supported yet, ignoring \"connect_error_reports\", \"reconnect_error_reports\""],
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
