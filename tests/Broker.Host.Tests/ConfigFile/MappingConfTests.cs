using Broker.Host.Configuration.ConfigFile;
using Broker.TestKit;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// <c>mappings</c>/<c>maps</c> at the top level (the global account's) and in an account: the keys they become, and
/// each refusal compared with <c>nats-server -t</c> (text and position of the first problem; files start with a comment
/// line, as nats-server counts columns from 0 on a file's first line only, and avoid quoted keys, whose position is
/// their opening quote here and the character after it there).
/// </summary>
public sealed class MappingConfTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-conf-map-").FullName;

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Fact]
    public void Top_level_mappings_are_the_global_accounts()
    {
        var mapping = ConfMappingTests.Map("mappings {\n  foo.*: bar.$1\n  orders: [ {dest: a, weight: 40%}, {destination: b, weight: 20, cluster: c1} ]\n  one: {dest: two, weight: \"50\"}\n}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        Assert.Equal("foo.*", mapping.Settings["Broker:Mappings:0:Source"]);
        Assert.Equal("bar.$1", mapping.Settings["Broker:Mappings:0:Destinations:0:Subject"]);
        Assert.Equal("100", mapping.Settings["Broker:Mappings:0:Destinations:0:Weight"]);
        Assert.Equal("orders", mapping.Settings["Broker:Mappings:1:Source"]);
        Assert.Equal("40", mapping.Settings["Broker:Mappings:1:Destinations:0:Weight"]);
        Assert.Equal("b", mapping.Settings["Broker:Mappings:1:Destinations:1:Subject"]);
        Assert.Equal("c1", mapping.Settings["Broker:Mappings:1:Destinations:1:Cluster"]);
        Assert.Equal("50", mapping.Settings["Broker:Mappings:2:Destinations:0:Weight"]);
        Assert.DoesNotContain(mapping.Diagnostics, d => d.ToString().Contains("Subject mappings", StringComparison.Ordinal));
    }

    [Fact]
    public void Of_two_top_level_blocks_the_last_is_kept_as_nats_server_keeps_it()
    {
        var mapping = ConfMappingTests.Map("maps { a: b }\nmappings { x: y }");

        Assert.False(mapping.HasErrors);
        Assert.Equal("x", mapping.Settings["Broker:Mappings:0:Source"]);
        Assert.DoesNotContain("Broker:Mappings:1:Source", mapping.Settings.Keys);
    }

    [Fact]
    public void An_accounts_two_blocks_add_up()
    {
        var mapping = ConfMappingTests.Map("accounts {\n  A: {\n    mappings: { a: b }\n    maps: { c: d }\n  }\n}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        Assert.Equal("a", mapping.Settings["Broker:Accounts:0:Mappings:0:Source"]);
        Assert.Equal("c", mapping.Settings["Broker:Accounts:0:Mappings:1:Source"]);
        Assert.Equal("d", mapping.Settings["Broker:Accounts:0:Mappings:1:Destinations:0:Subject"]);
    }

    [Theory]
    [InlineData("mappings {\n  foo.*: bar\n}")]
    [InlineData("mappings {\n  foo.*: bar.$2\n}")]
    [InlineData("mappings {\n  foo.*: bar.*\n}")]
    [InlineData("mappings {\n  foo.>: bar\n}")]
    [InlineData("mappings {\n  foo.*: bar.{{unknown(1)}}\n}")]
    [InlineData("mappings {\n  foo.*: bar.{{wildcard()}}\n}")]
    [InlineData("mappings {\n  foo.*: \"bar.{{partition(a,1)}}\"\n}")]
    [InlineData("mappings {\n  foo.*: \"bar.{{split(1,.)}}\"\n}")]
    [InlineData("mappings {\n  foo.*: \"bar.$1.{{wildcard(3)}}\"\n}")]
    [InlineData("mappings {\n  foo: [{dest: bar, weight: 150%}]\n}")]
    [InlineData("mappings {\n  foo: [{dest: bar, weight: -1}]\n}")]
    [InlineData("mappings {\n  foo: [{dest: bar, weight: x%}]\n}")]
    [InlineData("mappings {\n  foo: [{dest: bar, weight: true}]\n}")]
    [InlineData("mappings {\n  foo: [{dest: bar}]\n}")]
    [InlineData("mappings {\n  foo: {dest: bar}\n}")]
    [InlineData("mappings {\n  foo: [{dest: bar, weight: 10, what: 1}]\n}")]
    [InlineData("mappings {\n  foo: 5\n}")]
    [InlineData("mappings {\n  foo: [ 5 ]\n}")]
    [InlineData("mappings {\n  foo: [{dest: 5, weight: 5}]\n}")]
    [InlineData("mappings {\n  foo: {dest: 5, weight: 10}\n}")]
    [InlineData("mappings {\n  foo: [\n    {dest: bar, weight: 60}\n    {dest: baz, weight: 60}\n  ]\n}")]
    [InlineData("mappings {\n  foo: [{dest: bar, weight: 50}, {dest: bar, weight: 50}]\n}")]
    [InlineData("mappings {\n  foo.*: {dest: bar, weight: 50}\n}")]
    [InlineData("mappings: 5")]
    [InlineData("maps {\n  foo..bar: x\n}")]
    [InlineData("accounts {\n  A: {\n    mappings: {\n      foo.*: bar\n    }\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    maps: 5\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    mappings: {\n      x: [{dest: bar}]\n    }\n  }\n}")]
    public async Task First_problem_matches_nats_server(string body)
    {
        var file = Path.Combine(directory, "check.conf");
        await File.WriteAllTextAsync(file, "# checked by both servers\n" + body + "\n");

        var binary = ReferenceServer.BinaryPath ?? throw new InvalidOperationException("nats-server (the Go reference) is not installed; ./scripts/test.sh installs it.");
        var result = await ExternalProcess.RunAsync(binary, ["-t", "-c", file], TimeSpan.FromSeconds(20));
        Assert.True(result.ExitCode == 1, result.ToString());
        var first = result.ErrorText.Split('\n')[0].TrimEnd('\r');
        Assert.StartsWith("nats-server: ", first, StringComparison.Ordinal);

        var ours = ConfMapper.MapFile(file, PluginBlocks.None).Diagnostics[0].ToString();
        Assert.Equal(first["nats-server: ".Length..], ours);
    }

    [Theory]
    [InlineData("mappings {\n  foo.*: \"bar.{{partition(3, 1)}}.$1\"\n  a: [{dest: b, weight: 50%}, {dest: c, weight: 50, cluster: x}]\n}\nmaps { c: d }")]
    [InlineData("accounts {\n  A: {\n    mappings: { foo.*.*: \"x.{{splitFromLeft(1, 2)}}.{{SliceFromRight(2,3)}}\" }\n  }\n}")]
    public async Task A_file_nats_server_accepts_maps_without_a_problem(string body)
    {
        var file = Path.Combine(directory, "ok.conf");
        await File.WriteAllTextAsync(file, "# checked by both servers\n" + body + "\n");

        var binary = ReferenceServer.BinaryPath ?? throw new InvalidOperationException("nats-server (the Go reference) is not installed; ./scripts/test.sh installs it.");
        var result = await ExternalProcess.RunAsync(binary, ["-t", "-c", file], TimeSpan.FromSeconds(20));
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Empty(ConfMapper.MapFile(file, PluginBlocks.None).Diagnostics);
    }
}
