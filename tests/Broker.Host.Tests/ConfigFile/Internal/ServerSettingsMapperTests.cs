using Broker.Host.Configuration.ConfigFile.Internal;
using static Broker.Host.Tests.ConfigFile.Internal.MapperTestKit;

namespace Broker.Host.Tests.ConfigFile.Internal;

public sealed class ServerSettingsMapperTests
{
    [Theory]
    [InlineData("host:4222", "host", "4222")]
    [InlineData("127.0.0.1:-1", "127.0.0.1", "-1")]
    [InlineData(":4222", "", "4222")]
    [InlineData("[::1]:80", "::1", "80")]
    [InlineData("[::1]:", "::1", "")]
    [InlineData("host:port", "host", "port")]
    public void Host_and_port_split_as_gos_SplitHostPort(string text, string host, string port)
    {
        Assert.True(ServerSettingsMapper.TrySplitHostPort(text, out var h, out var p));
        Assert.Equal((host, port), (h, p));
    }

    [Theory]
    [InlineData("host")]
    [InlineData("::1:80")]
    [InlineData("[::1]80")]
    [InlineData("[::1:80")]
    [InlineData("a]:80")]
    [InlineData("host:[80]")]
    public void Addresses_go_cannot_split_are_refused(string text)
    {
        Assert.False(ServerSettingsMapper.TrySplitHostPort(text, out _, out _));
    }

    [Fact]
    public void Maps_only_the_servers_keys()
    {
        var output = new ConfMappingBuilder();
        var mapper = new ServerSettingsMapper(new ConfValueReader(output), output);

        Assert.True(mapper.TryMap(Entry("LISTEN: \":4333\"")));
        Assert.True(mapper.TryMap(Entry("max_subs: -1")));
        Assert.False(mapper.TryMap(Entry("authorization {}")));
        Assert.False(mapper.TryMap(Entry("cluster {}")));

        Assert.Equal(["Broker:Host=0.0.0.0", "Broker:MaxSubscriptions=0", "Broker:Port=4333"], Settings(Built(output)));
        Assert.True(ServerSettingsMapper.Reads("Http_Port"));
        Assert.False(ServerSettingsMapper.Reads("no_auth_user"));
    }
}
