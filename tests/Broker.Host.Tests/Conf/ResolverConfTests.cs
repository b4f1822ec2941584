using Broker.Host.Configuration.Conf;
using Broker.Host.Configuration.ConfigFile;
using Broker.Host.Configuration.ConfigFile.Internal;

namespace Broker.Host.Tests.Conf;

/// <summary>
/// The <c>resolver</c> entry onto the operator options' keys, with nats-server 2.9.10's texts (opts.go
/// <c>case "resolver"</c>). The mapper is called directly: the operator keys around it are wired on their own.
/// </summary>
public sealed class ResolverConfTests
{
    private static ConfMapping Map(string text)
    {
        var root = ConfTestKit.Parse(text);
        var output = new ConfMappingBuilder();
        new ResolverMapper(new ConfValueReader(output), output).Map(root.Entries[0]);
        return output.Build("test.conf");
    }

    [Fact]
    public void A_full_resolver_map_sets_the_directory_options()
    {
        var mapping = Map("resolver: { type: full, dir: \"/tmp/jwt\", allow_delete: true, interval: \"2m\", limit: 10, timeout: \"3s\" }");

        Assert.Empty(mapping.Diagnostics);
        Assert.Equal("Full", mapping.Settings["Broker:Operator:Resolver"]);
        Assert.Equal("/tmp/jwt", mapping.Settings["Broker:Operator:DirectoryResolver:Directory"]);
        Assert.Equal("true", mapping.Settings["Broker:Operator:DirectoryResolver:AllowDelete"]);
        Assert.Equal("10", mapping.Settings["Broker:Operator:DirectoryResolver:Limit"]);
        Assert.Equal("00:02:00", mapping.Settings["Broker:Operator:DirectoryResolver:SyncInterval"]);
        Assert.Equal("00:00:03", mapping.Settings["Broker:Operator:DirectoryResolver:FetchTimeout"]);
    }

    [Theory]
    [InlineData("resolver: MEMORY", "Memory")]
    [InlineData("account_resolver: mem", "Memory")]
    [InlineData("resolver: { type: CACHE, dir: \"/tmp/jwt\", ttl: \"1h\" }", "Cache")]
    public void Each_form_names_its_resolver(string text, string expected) =>
        Assert.Equal(expected, Map(text).Settings["Broker:Operator:Resolver"]);

    [Theory]
    [InlineData("resolver: { type: full }", "dir has no value and needs to point to a directory")]
    [InlineData("resolver: { type: cache, dir: \"/tmp/jwt\", interval: \"1m\" }", "CACHE does not accept sync")]
    [InlineData("resolver: { type: cache, dir: \"/tmp/jwt\", allow_delete: true }", "CACHE does not accept allow_delete")]
    [InlineData("resolver: { type: full, dir: \"/tmp/jwt\", ttl: \"1m\" }", "FULL does not accept ttl")]
    [InlineData("resolver: { type: full, dir: \"/tmp/jwt\", ttl: \"x\" }", "time: invalid duration \"x\"")]
    [InlineData("resolver: { type: other, dir: \"/tmp/jwt\" }", "error parsing account resolver, should be MEM or  URL(\"url\") or a map containing dir and type state=[FULL|CACHE])")]
    [InlineData("resolver: URL(\"http://localhost:9090/jwt/v1/accounts/\")", "\"resolver\": not supported (URL account resolvers: the broker has no HTTP client for account JWTs; use MEMORY or a full or cache resolver); the broker does not run without a security setting it cannot enforce")]
    [InlineData("resolver: 5", "error parsing operator resolver, wrong type int64")]
    public void A_resolver_nats_server_refuses_is_an_error_at_the_key(string text, string expected)
    {
        var diagnostic = Assert.Single(Map(text).Diagnostics);
        Assert.Equal(ConfDiagnosticKind.Error, diagnostic.Kind);
        Assert.Equal(expected, diagnostic.Message);
        Assert.Equal(1, diagnostic.Position!.Value.Line);
    }
}
