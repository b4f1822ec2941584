using Broker.Host.Configuration.Conf;
using Broker.Host.Configuration.ConfigFile.Internal;
using static Broker.Host.Tests.ConfigFile.Internal.MapperTestKit;

namespace Broker.Host.Tests.ConfigFile.Internal;

public sealed class ConfMappingBuilderTests
{
    private static readonly ConfPosition At = new("f.conf", 2, 3);

    [Fact]
    public void Warnings_and_notices_come_before_errors_each_in_the_order_found()
    {
        var output = new ConfMappingBuilder();
        output.Error(At, "e1");
        output.Warning(At, "w1");
        output.Unsupported(At, "n1");
        output.Error(null, "e2");
        output.Warning(null, "w2");

        Assert.Equal(
            ["Warning f.conf:2:3: w1", "Unsupported f.conf:2:3: n1", "Warning w2", "Error f.conf:2:3: e1", "Error e2"],
            Diagnostics(Built(output)));
    }

    [Fact]
    public void Keys_are_case_insensitive_and_a_later_value_wins()
    {
        var output = new ConfMappingBuilder();
        output.Set("Broker:Port", "1");
        output.Set("broker:port", "2");
        output.SetPosition("Plugins:Tls:cert", At);

        var mapping = Built(output);

        Assert.Equal(["Broker:Port=2"], Settings(mapping));
        Assert.Equal(At, mapping.Positions["plugins:tls:CERT"]);
        Assert.Equal("test.conf", mapping.File);
    }

    [Fact]
    public void Removing_a_section_removes_the_keys_under_it_only()
    {
        var output = new ConfMappingBuilder();
        output.Set("A:Users:1:User", "a");
        output.Set("A:Users:1:Permissions:Publish:Allow:0", "x");
        output.Set("A:Users:10:User", "b");
        output.Set("A:Users:1", "section");

        output.RemoveSection("a:users:1");

        Assert.Equal(["A:Users:1=section", "A:Users:10:User=b"], Settings(Built(output)));
    }
}
