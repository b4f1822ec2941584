using Broker.Host.Plugins;
using Broker.TestKit;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Tests.Plugins;

/// <summary>
/// The build's plugin manifests (<c>&lt;Name&gt;.plugin-manifest</c>): written for every placed plugin, the same as the
/// metadata, used by discovery only while they describe the assembly's metadata; a plugin without one, or with a stale
/// or malformed one, is discovered from its metadata as before.
/// </summary>
public sealed class PluginManifestFileTests : IDisposable
{
    private readonly string plugins = SamplePlugin.CreatePluginsFolder();
    private readonly TestLogSink logs = new();

    public void Dispose() => SamplePlugin.Delete(plugins);

    public static TheoryData<string> PlacedPlugins()
    {
        var data = new TheoryData<string>();
        foreach (var folder in new[] { "plugins", "test-plugins" })
        {
            foreach (var plugin in Directory.GetDirectories(Path.Combine(AppContext.BaseDirectory, folder)))
            {
                data.Add(Path.Combine(folder, Path.GetFileName(plugin)));
            }
        }

        return data;
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(PlacedPlugins))]
    public async Task The_build_writes_each_placed_plugins_manifest_as_its_metadata_reads(string plugin)
    {
        await Task.Yield();
        var folder = Path.Combine(AppContext.BaseDirectory, plugin);
        var assembly = Path.Combine(folder, Path.GetFileName(folder) + ".dll");
        var manifest = PluginManifestFile.PathFor(assembly);
        Assert.True(File.Exists(manifest), manifest);

        var key = PluginManifestFile.FileKey(assembly);
        Assert.NotNull(key);
        var fromMetadata = PluginManifestFile.Format(PluginMetadata.Read(assembly), key);
        Assert.Equal(fromMetadata, File.ReadAllText(manifest));

        // And it reads back to the same declaration.
        var read = PluginManifestFile.TryRead(assembly);
        Assert.NotNull(read);
        Assert.Equal(fromMetadata, PluginManifestFile.Format(read, key));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_manifest_that_describes_the_assembly_is_used_instead_of_its_metadata()
    {
        await Task.Yield();
        var assembly = SamplePlugin.CopyTo(plugins);
        var manifest = PluginManifestFile.PathFor(assembly);
        Assert.True(File.Exists(manifest), "the sample's copy carries the build's manifest");

        // The same key, another id: only the manifest can have said "FromManifest".
        File.WriteAllText(manifest, File.ReadAllText(manifest).Replace("\nid Line\n", "\nid FromManifest\n", StringComparison.Ordinal));

        var candidate = Assert.Single(Discover().Candidates);
        Assert.Equal("FromManifest", candidate.Manifest.Id);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_manifest_of_other_metadata_falls_back_to_the_assembly()
    {
        await Task.Yield();
        var assembly = SamplePlugin.CopyTo(plugins);
        var manifest = PluginManifestFile.PathFor(assembly);
        var lines = File.ReadAllLines(manifest);
        lines[1] = "file 1234 0123456789abcdef";
        File.WriteAllLines(manifest, lines.Select(l => l == "id Line" ? "id FromManifest" : l));

        var candidate = Assert.Single(Discover().Candidates);
        Assert.Equal(SamplePlugin.Id, candidate.Manifest.Id);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_patched_assembly_makes_its_manifest_stale()
    {
        await Task.Yield();
        var assembly = SamplePlugin.CopyTo(plugins);
        var before = PluginManifestFile.FileKey(assembly);

        // The referenced contract rewritten in place (same length, same PE header): the metadata's hash changes, so
        // discovery reads the metadata and refuses the plugin as it would without a manifest.
        SamplePlugin.PatchReferencedContract(assembly, 99, 0);

        Assert.NotEqual(before, PluginManifestFile.FileKey(assembly));
        Assert.Null(PluginManifestFile.TryRead(assembly));
        Assert.Empty(Discover().Candidates);
        Assert.Contains(logs.Errors, e => e.Message.Contains("99.0", StringComparison.Ordinal));
    }

    [Theory(Timeout = 30_000)]
    [InlineData("broker-plugin-manifest 2")]
    [InlineData("")]
    [InlineData("unknown line")]
    [InlineData("list aliases 5")]
    [InlineData("contract x.y")]
    [InlineData("id")]
    public async Task A_malformed_manifest_falls_back_to_the_assembly(string bad)
    {
        await Task.Yield();
        var assembly = SamplePlugin.CopyTo(plugins);
        var manifest = PluginManifestFile.PathFor(assembly);
        var lines = File.ReadAllLines(manifest).Select(l => l == "id Line" ? "id FromManifest" : l).ToList();
        if (bad.StartsWith("broker-plugin-manifest", StringComparison.Ordinal))
        {
            lines[0] = bad;
        }
        else
        {
            lines.Add(bad);
        }

        File.WriteAllLines(manifest, lines);

        Assert.Null(PluginManifestFile.TryRead(assembly));
        var candidate = Assert.Single(Discover().Candidates);
        Assert.Equal(SamplePlugin.Id, candidate.Manifest.Id);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_plugin_without_a_manifest_is_discovered_and_loaded_from_its_metadata()
    {
        await Task.Yield();
        var assembly = SamplePlugin.CopyTo(plugins);
        File.Delete(PluginManifestFile.PathFor(assembly));

        var catalog = new PluginCatalog(logs.CreateLogger("Broker.Plugins"));
        var result = catalog.Configure(catalog.Discover(plugins, configured: true), new ConfigurationBuilder().Build());

        var loaded = Assert.Single(result.Loaded);
        Assert.Equal(SamplePlugin.Id, loaded.Manifest.Id);
        Assert.Empty(logs.Errors);
    }

    [Fact(Timeout = 30_000)]
    public async Task The_format_keeps_absent_and_empty_apart_and_refuses_line_breaks()
    {
        await Task.Yield();
        var declaration = new PluginDeclaration("A b", new Version(1, 2, 3, 4), "T, A b")
        {
            Id = "",
            ConfigurationAliases = [],
            ActivationKeys = ["x:y", ""],
        };
        var text = PluginManifestFile.Format(new PluginMetadata(new Version(1, 4), declaration), "10 00000000000000ff");
        Assert.NotNull(text);

        var read = PluginManifestFile.Parse(text.Split('\n')[..^1], "10 00000000000000ff");
        Assert.NotNull(read);
        Assert.Equal(new Version(1, 4), read.ReferencedContract);
        var back = read.Attribute!;
        Assert.Equal(("A b", new Version(1, 2, 3, 4), "T, A b", ""), (back.AssemblyName, back.AssemblyVersion, back.StartupType, back.Id));
        Assert.Null(back.Version);
        Assert.Null(back.MinimumContractVersion);
        Assert.Empty(back.ConfigurationAliases!);
        Assert.Null(back.ConfigurationKeys);
        Assert.Equal(["x:y", ""], back.ActivationKeys!);
        Assert.Null(PluginManifestFile.Parse(text.Split('\n')[..^1], "10 00000000000000fe"));

        // No contract reference, no attribute: both absent after a round trip.
        var bare = PluginManifestFile.Format(new PluginMetadata(null, null), "1 0000000000000001")!;
        Assert.Equal(new PluginMetadata(null, null), PluginManifestFile.Parse(bare.Split('\n')[..^1], "1 0000000000000001"));

        // A value with a line break cannot be written: the build writes no manifest, the host reads the metadata.
        Assert.Null(PluginManifestFile.Format(new PluginMetadata(null, declaration with { Id = "a\nb" }), "1 0000000000000001"));
        Assert.Null(PluginManifestFile.Format(new PluginMetadata(null, declaration with { ConfigurationKeys = ["a\rb"] }), "1 0000000000000001"));
    }

    private PluginDiscovery Discover() => new PluginCatalog(logs.CreateLogger("Broker.Plugins")).Discover(plugins, configured: true);
}
