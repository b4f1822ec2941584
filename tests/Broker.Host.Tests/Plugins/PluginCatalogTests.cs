using System.Runtime.Loader;
using Broker.Abstractions;
using Broker.Host.Configuration.ConfigFile;
using Broker.Host.Plugins;
using Broker.TestKit;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Broker.Host.Tests.Plugins;

/// <summary>The plugin catalog in-process: what it loads, how it isolates, and every reason it refuses a plugin.</summary>
public sealed class PluginCatalogTests : IDisposable
{
    private readonly string plugins = SamplePlugin.CreatePluginsFolder();
    private readonly TestLogSink logs = new();

    public void Dispose() => SamplePlugin.Delete(plugins);

    [Fact]
    public void Build_places_the_sample_plugin_without_the_contract_assembly()
    {
        Assert.True(File.Exists(Path.Combine(SamplePlugin.BuiltFolder, SamplePlugin.AssemblyName + ".dll")));
        Assert.True(File.Exists(Path.Combine(SamplePlugin.BuiltFolder, SamplePlugin.AssemblyName + ".deps.json")));

        // A private copy of the contract (or of its Microsoft.Extensions abstractions) would be a second set of types.
        Assert.Empty(Directory.GetFiles(SamplePlugin.BuiltFolder, "Broker.Abstractions.dll"));
        Assert.Empty(Directory.GetFiles(SamplePlugin.BuiltFolder, "Microsoft.Extensions.*.dll"));

        // Placed, not referenced: the test's own context never sees the sample.
        Assert.False(File.Exists(Path.Combine(AppContext.BaseDirectory, SamplePlugin.AssemblyName + ".dll")));
    }

    [Fact]
    public void Loads_the_sample_into_its_own_context_sharing_the_contract()
    {
        SamplePlugin.CopyTo(plugins);

        var loaded = Assert.Single(Load());

        Assert.Equal(new PluginManifest(SamplePlugin.Id, new Version(1, 2, 0, 0), new Version(1, 1)), loaded.Manifest);
        var listener = Assert.Single(loaded.Services, d => d.ServiceType == typeof(ListenerDefinition));
        var middleware = Assert.Single(loaded.Services, d => d.ServiceType == typeof(IConnectionMiddleware));
        var pluginAssembly = middleware.ImplementationFactory!.Method.DeclaringType!.Assembly;
        var context = AssemblyLoadContext.GetLoadContext(pluginAssembly);
        Assert.NotNull(context);
        Assert.NotSame(AssemblyLoadContext.Default, context);
        Assert.Equal(SamplePlugin.AssemblyName, pluginAssembly.GetName().Name);

        // The contract resolved to the host's copy, so the registrations are of the host's types.
        Assert.Same(AssemblyLoadContext.Default, AssemblyLoadContext.GetLoadContext(listener.ImplementationInstance!.GetType().Assembly));
        Assert.Empty(logs.Errors);
    }

    [Fact]
    public void Passes_the_plugins_configuration_section_to_the_plugin()
    {
        SamplePlugin.CopyTo(plugins);

        var loaded = Assert.Single(Load(new() { ["Plugins:Line:port"] = "4711" }));

        var listener = (ListenerDefinition)loaded.Services.Single(d => d.ServiceType == typeof(ListenerDefinition)).ImplementationInstance!;
        Assert.Equal("127.0.0.1:4711", listener.EndPoint.ToString());
    }

    [Fact]
    public void Refuses_a_plugin_compiled_against_a_newer_contract_before_loading_it()
    {
        SamplePlugin.PatchReferencedContract(SamplePlugin.CopyTo(plugins), 1, 5);

        Assert.Empty(Load());

        AssertSingleError($"Plugin {SamplePlugin.AssemblyName} skipped: built against contract 1.5, but this broker provides contract {BrokerContract.Version}");
    }

    [Fact]
    public void Loads_a_plugin_compiled_against_an_older_contract_minor_with_the_hosts_contract()
    {
        SamplePlugin.PatchReferencedContract(SamplePlugin.CopyTo(plugins), 1, 0);

        var loaded = Assert.Single(Load(new() { ["Plugins:Line:max_line"] = "1KB" }));

        Assert.Equal(SamplePlugin.Id, loaded.Manifest.Id);
        Assert.Empty(logs.Errors);
    }

    [Fact]
    public void Refuses_a_plugin_compiled_against_another_contract_major()
    {
        SamplePlugin.PatchReferencedContract(SamplePlugin.CopyTo(plugins), 2, 0);

        Assert.Empty(Load());

        AssertSingleError($"built against contract 2.0, but this broker provides contract {BrokerContract.Version}");
    }

    [Fact]
    public void Refuses_a_plugin_whose_manifest_needs_a_newer_contract()
    {
        SamplePlugin.PatchManifestMinimumContract(SamplePlugin.CopyTo(plugins), '9');

        Assert.Empty(Load());

        AssertSingleError($"Plugin {SamplePlugin.AssemblyName} skipped: its manifest requires contract 9.1, but this broker provides contract {BrokerContract.Version}");
    }

    [Fact]
    public void Skips_broken_folders_and_loads_the_rest()
    {
        Directory.CreateDirectory(Path.Combine(plugins, "Empty"));
        SamplePlugin.CreateGarbage(plugins, "Garbage");
        SamplePlugin.CreateFromAssembly(plugins, "NoContract", "xunit.assert.dll");
        SamplePlugin.CreateFromAssembly(plugins, "NoAttribute", "Broker.Core.dll");
        SamplePlugin.CopyTo(plugins);

        var loaded = Assert.Single(Load());

        Assert.Equal(SamplePlugin.Id, loaded.Manifest.Id);
        var errors = logs.Errors.Select(e => e.Message).ToList();
        Assert.Equal(4, errors.Count);
        Assert.Contains(errors, e => e.StartsWith("Plugin Empty skipped: ", StringComparison.Ordinal) && e.EndsWith("Empty.dll not found", StringComparison.Ordinal));
        Assert.Contains(errors, e => e.StartsWith("Plugin Garbage skipped: ", StringComparison.Ordinal) && e.Contains("is not a .NET assembly", StringComparison.Ordinal));
        Assert.Contains("Plugin NoContract skipped: it does not reference Broker.Abstractions, so it is not a broker plugin", errors);
        Assert.Contains("Plugin NoAttribute skipped: its assembly has no [assembly: BrokerPlugin(...)] attribute", errors);
    }

    [Fact]
    public void Refuses_a_second_plugin_with_the_same_id()
    {
        SamplePlugin.CopyTo(plugins, "A.Line");
        SamplePlugin.CopyTo(plugins, "B.Line");

        var loaded = Assert.Single(Load());

        Assert.EndsWith("A.Line", loaded.Folder, StringComparison.Ordinal);
        AssertSingleError("Plugin B.Line skipped: id Line is already used by the plugin in ");
    }

    [Fact]
    public void A_plugin_that_refuses_its_settings_is_reported_with_its_message_and_the_key()
    {
        SamplePlugin.CopyTo(plugins);

        var result = Configure(new() { ["Plugins:Line:port"] = "not-a-port" });

        Assert.Empty(result.Loaded);
        var refusal = Assert.Single(result.Refusals);
        Assert.Equal(new PluginRefusal(SamplePlugin.Id, "Plugins:Line:port: expected integer, but got 'not-a-port'", "Plugins:Line:port"), refusal);
        Assert.Empty(logs.Errors);
    }

    [Fact]
    public void Skips_a_plugin_whose_ConfigureServices_throws_anything_else_and_leaves_its_section_unclaimed()
    {
        SamplePlugin.CopyTo(plugins);
        SamplePlugin.CopyProbeTo(plugins);
        var settings = new Dictionary<string, string?> { ["Plugins:Probe:Fail"] = "true" };

        var result = Configure(settings);

        Assert.Equal(SamplePlugin.Id, Assert.Single(result.Loaded).Manifest.Id);
        Assert.Empty(result.Refusals);
        AssertSingleError($"Plugin {SamplePlugin.ProbeAssemblyName} skipped: configuring its services failed: the probe was told to fail");
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(settings).Build();
        Assert.Equal([SamplePlugin.ProbeId], PluginCatalog.Unclaimed(configuration, result.Loaded));
    }

    [Fact]
    public void A_plugin_gets_its_own_copy_of_a_library_the_host_has_in_another_version_and_the_hosts_shared_ones()
    {
        SamplePlugin.CopyProbeTo(plugins);

        var loaded = Assert.Single(Load(new() { ["Plugins:Probe:Greeting"] = "hi" }));

        // The probe bound its settings with its own Binder (an older major than this process has) on the host's
        // IConfiguration: the report it registered carries the bound greeting.
        var report = Assert.Single(loaded.Services, d => d.ServiceType == typeof(Microsoft.Extensions.Hosting.IHostedService));
        var probeContext = AssemblyLoadContext.GetLoadContext(report.ImplementationFactory!.Method.DeclaringType!.Assembly)!;
        var binders = AppDomain.CurrentDomain.GetAssemblies().Where(a => a.GetName().Name == "Microsoft.Extensions.Configuration.Binder").ToList();
        var own = Assert.Single(binders, a => AssemblyLoadContext.GetLoadContext(a) == probeContext);
        var hosts = typeof(ConfigurationBinder).Assembly;
        Assert.Same(AssemblyLoadContext.Default, AssemblyLoadContext.GetLoadContext(hosts));
        Assert.NotEqual(hosts.GetName().Version!.Major, own.GetName().Version!.Major);
        Assert.StartsWith(Path.Combine(plugins, SamplePlugin.ProbeAssemblyName), own.Location, StringComparison.Ordinal);

        // The folder carries its own Microsoft.Extensions.Configuration.Abstractions too, but the shared one is the host's.
        Assert.True(File.Exists(Path.Combine(plugins, SamplePlugin.ProbeAssemblyName, "Microsoft.Extensions.Configuration.Abstractions.dll")));
        Assert.DoesNotContain(probeContext.Assemblies, a => a.GetName().Name == "Microsoft.Extensions.Configuration.Abstractions");
        Assert.Empty(logs.Errors);
    }

    [Fact]
    public void A_plugin_finds_a_dependency_in_an_additional_probing_path_of_its_runtimeconfig()
    {
        // McMaster's PluginLoader reads every runtimeconfig for probing paths; the catalog has McMaster's reader read
        // only the files that name some, so a plugin that names one must still find what it keeps there.
        SamplePlugin.CopyProbeTo(plugins);
        var folder = Path.Combine(plugins, SamplePlugin.ProbeAssemblyName);
        var elsewhere = Path.Combine(Path.GetTempPath(), "broker-probing-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(elsewhere);
        try
        {
            const string Binder = "Microsoft.Extensions.Configuration.Binder.dll";
            File.Move(Path.Combine(folder, Binder), Path.Combine(elsewhere, Binder));
            var probingPaths = System.Text.Json.JsonSerializer.Serialize(new[] { elsewhere });
            File.WriteAllText(
                Path.Combine(folder, SamplePlugin.ProbeAssemblyName + ".runtimeconfig.json"),
                "{\"runtimeOptions\":{\"tfm\":\"net10.0\",\"additionalProbingPaths\":" + probingPaths + "}}");

            var loaded = Assert.Single(Load(new() { ["Plugins:Probe:Greeting"] = "hi" }));

            var report = Assert.Single(loaded.Services, d => d.ServiceType == typeof(Microsoft.Extensions.Hosting.IHostedService));
            var probeContext = AssemblyLoadContext.GetLoadContext(report.ImplementationFactory!.Method.DeclaringType!.Assembly)!;
            var own = Assert.Single(probeContext.Assemblies, a => a.GetName().Name == "Microsoft.Extensions.Configuration.Binder");
            Assert.StartsWith(elsewhere, own.Location, StringComparison.Ordinal);
            Assert.Empty(logs.Errors);
        }
        finally
        {
            SamplePlugin.Delete(elsewhere);
        }
    }

    [Fact]
    public void A_missing_plugins_folder_loads_nothing()
    {
        var found = new PluginCatalog(CreateLogger()).Discover(Path.Combine(plugins, "absent"), configured: true);

        Assert.Empty(found.Candidates);
        Assert.Contains(logs.Entries, e => e.Level == LogLevel.Warning && e.Message.Contains("does not exist", StringComparison.Ordinal));
        Assert.Empty(logs.Errors);
    }

    [Fact]
    public void Discovery_runs_no_plugin_code_and_collects_the_blocks_the_plugin_reads()
    {
        SamplePlugin.CopyTo(plugins);

        var found = new PluginCatalog(CreateLogger()).Discover(plugins, configured: true);

        var candidate = Assert.Single(found.Candidates);
        Assert.Equal(SamplePlugin.Id, candidate.Manifest.Id);
        Assert.True(found.Blocks.TryGet("LINE", out var block));
        Assert.Equal(new PluginBlock("line", SamplePlugin.Id, Whole: true), block);
        Assert.Equal("Plugins:Line", block.Target);
    }

    [Fact]
    public void A_plugin_cannot_claim_a_broker_key_nor_another_plugins_block()
    {
        var catalog = new PluginCatalog(CreateLogger());
        var blocks = new PluginBlocks();

        // Its id "Http" and its key "port" are the broker's own: warnings, and the plugin still loads.
        Assert.True(catalog.ClaimBlocks("A", "Http", ["web"], ["port"], blocks));
        Assert.Equal(2, logs.Entries.Count(e => e.Level == LogLevel.Warning && e.Message.Contains("is the broker's own", StringComparison.Ordinal)));
        Assert.Equal([new PluginBlock("web", "Http", Whole: true)], blocks.All);

        // A block another plugin reads refuses the second plugin, which claims nothing.
        Assert.False(catalog.ClaimBlocks("B", "B", null, ["WEB"], blocks));
        AssertSingleError("Plugin B skipped: it reads configuration block \"WEB\", but plugin Http reads it");
        Assert.False(blocks.TryGet("b", out _));
    }

    [Theory]
    [InlineData("Broker.Abstractions")]
    [InlineData("Microsoft.Extensions.DependencyInjection.Abstractions")]
    [InlineData("Microsoft.Extensions.Logging.Abstractions")]
    [InlineData("Microsoft.Extensions.Configuration.Abstractions")]
    [InlineData("Microsoft.Extensions.Hosting.Abstractions")]
    [InlineData("Microsoft.Extensions.Options")]
    [InlineData("Microsoft.Extensions.Primitives")]
    public void Shares_the_contract_and_the_extensions_abstractions_explicitly(string assembly)
    {
        Assert.Contains(assembly, PluginLoaders.SharedTypes.Select(t => t.Assembly.GetName().Name));
    }

    [Theory]
    [InlineData("Microsoft.Extensions.Logging")]
    [InlineData("Microsoft.Extensions.Configuration.Binder")]
    [InlineData("Serilog")]
    [InlineData("Broker.Core")]
    public void Shares_nothing_else(string assembly)
    {
        Assert.DoesNotContain(assembly, PluginLoaders.SharedTypes.Select(t => t.Assembly.GetName().Name));
    }

    private IReadOnlyList<LoadedPlugin> Load(Dictionary<string, string?>? settings = null)
    {
        var result = Configure(settings);
        Assert.Empty(result.Refusals);
        return result.Loaded;
    }

    private PluginConfiguration Configure(Dictionary<string, string?>? settings = null)
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(settings ?? []).Build();
        var catalog = new PluginCatalog(CreateLogger());
        return catalog.Configure(catalog.Discover(plugins, configured: true), configuration);
    }

    private ILogger CreateLogger() => logs.CreateLogger("Broker.Plugins");

    private void AssertSingleError(string expected)
    {
        var error = Assert.Single(logs.Errors);
        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
    }
}
