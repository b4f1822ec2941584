using System.Runtime.Loader;
using Broker.Abstractions;
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

        var loaded = Assert.Single(Load(new() { ["Plugins:Line:Port"] = "4711" }));

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
    public void Skips_a_plugin_whose_ConfigureServices_throws()
    {
        SamplePlugin.CopyTo(plugins);

        Assert.Empty(Load(new() { ["Plugins:Line:Port"] = "not-a-port" }));

        AssertSingleError($"Plugin {SamplePlugin.AssemblyName} skipped: configuring its services failed: Plugins:Line:Port: \"not-a-port\" is not a number");
    }

    [Fact]
    public void A_missing_plugins_folder_loads_nothing()
    {
        Assert.Empty(new PluginCatalog(new ConfigurationBuilder().Build(), CreateLogger()).Load(Path.Combine(plugins, "absent"), configured: true));

        Assert.Contains(logs.Entries, e => e.Level == LogLevel.Warning && e.Message.Contains("does not exist", StringComparison.Ordinal));
        Assert.Empty(logs.Errors);
    }

    [Theory]
    [InlineData("Broker.Abstractions", true)]
    [InlineData("Microsoft.Extensions.Logging.Abstractions", true)]
    [InlineData("Microsoft.Extensions.DependencyInjection.Abstractions", true)]
    [InlineData("Microsoft.Extensions.Options", true)]
    [InlineData("Microsoft.Extensions.Primitives", true)]
    [InlineData("Microsoft.Extensions.Logging", false)]
    [InlineData("Serilog", false)]
    [InlineData("Broker.Core", false)]
    public void Shares_only_the_contract_and_the_extensions_abstractions(string assembly, bool shared)
    {
        Assert.Equal(shared, PluginLoadContext.IsShared(assembly));
    }

    private IReadOnlyList<LoadedPlugin> Load(Dictionary<string, string?>? settings = null)
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(settings ?? []).Build();
        return new PluginCatalog(configuration, CreateLogger()).Load(plugins, configured: true);
    }

    private ILogger CreateLogger() => logs.CreateLogger("Broker.Plugins");

    private void AssertSingleError(string expected)
    {
        var error = Assert.Single(logs.Errors);
        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
    }
}
