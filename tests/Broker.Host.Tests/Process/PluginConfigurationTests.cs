using Broker.Host.Tests.Plugins;
using Broker.TestKit;
using NATS.Client.Core;

namespace Broker.Host.Tests.Process;

/// <summary>
/// Plugins own their configuration, through the real executable: a plugin's block in a nats-server configuration file
/// reaches it without a change to the host, in nats-server's value syntax, read with the contract's shared reader; a
/// plugin that refuses a value stops the host with its message and exit code 1; a plugin carrying its own version of a
/// library the host also has runs with its own copy.
/// </summary>
public sealed class PluginConfigurationTests : IDisposable
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(15);

    private readonly string directory = SamplePlugin.CreatePluginsFolder();

    public void Dispose() => SamplePlugin.Delete(directory);

    [Fact(Timeout = 60_000)]
    public async Task The_sample_plugins_block_reaches_it_with_sizes_counts_and_durations()
    {
        // The default plugins folder next to the executable holds the sample; nothing in the host knows "line".
        var conf = WriteConf("""
            LINE {
              port: 0
              max_connections: 1
              max_line: 1KB
              idle_timeout: "1m30s"
            }
            """);
        await using var host = await HostProcess.StartReadyAsync(["-c", conf]);
        var endPoint = host.EndPoint("line");

        // max_connections: 1.
        await using var first = await RawClient.ConnectAsync(endPoint, readInfo: false);
        await first.SendAsync("SUB from.nats\r\n");
        Assert.Equal("OK", await first.ReadLineAsync());
        await using (var second = await RawClient.ConnectAsync(endPoint, readInfo: false))
        {
            Assert.Equal(["ERR too many connections"], await second.ExpectClosedAsync());
        }

        // The plugin serves, bridged to NATS.
        await using (var nats = new NatsConnection(new NatsOpts { Url = $"nats://{host.EndPoint("client")}" }))
        {
            await nats.PublishAsync("from.nats", "hello");
            Assert.Equal("MSG from.nats hello", await first.ReadLineAsync());
        }

        // max_line: 1KB is 1024 bytes.
        await first.SendAsync("PUB a " + new string('x', 1024) + "\r\n");
        Assert.Equal(["ERR line too long"], await first.ExpectClosedAsync());
    }

    [Fact(Timeout = 60_000)]
    public async Task A_go_duration_from_the_block_closes_an_idle_client()
    {
        var conf = WriteConf("""
            line { port: 0, idle_timeout: "1s200ms" }
            """);
        await using var host = await HostProcess.StartReadyAsync(["-c", conf]);

        await using var idle = await RawClient.ConnectAsync(host.EndPoint("line"), readInfo: false);

        Assert.Equal(["ERR idle timeout"], await idle.ExpectClosedAsync(TimeSpan.FromSeconds(20)));
    }

    [Fact(Timeout = 60_000)]
    public async Task A_value_the_plugin_refuses_stops_the_host_with_its_message_and_exit_code_1()
    {
        var conf = WriteConf("""
            port: 4222
            line {
              max_connections: lots
            }
            """);

        await using var host = HostProcess.Start(["-a", "127.0.0.1", "-p", "-1", "-c", conf]);

        Assert.Equal(1, await host.WaitForExitAsync(ExitTimeout));
        var error = Assert.Single(host.Lines, l => l.Contains("[ERR]", StringComparison.Ordinal));
        Assert.EndsWith($"[ERR] Broker failed to start: {conf}:3:3: Plugins:Line:max_connections: expected integer, but got 'lots'", error, StringComparison.Ordinal);
        Assert.False(host.HasListener("client"));
    }

    [Fact(Timeout = 60_000)]
    public async Task Check_config_reports_the_plugins_refusal_and_exits_1()
    {
        var conf = WriteConf("""
            line { port: 0, idle_timeout: "5 parsecs", prot: 1 }
            """);

        await using var host = HostProcess.Start(["-t", "-c", conf]);

        Assert.Equal(1, await host.WaitForExitAsync(ExitTimeout));
        Assert.Equal([$"broker: {conf}:1:44: Plugins:Line: unknown field \"prot\""], host.Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_block_no_plugin_reads_is_an_unknown_field_as_in_nats_server()
    {
        var conf = WriteConf("""
            lines { port: 0 }
            """);

        await using var host = HostProcess.Start(["-c", conf]);

        Assert.Equal(1, await host.WaitForExitAsync(ExitTimeout));
        Assert.Equal([$"broker: {conf}:1:1: unknown field \"lines\""], host.Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_block_whose_plugin_was_refused_is_unknown_after_the_refusal_is_logged()
    {
        SamplePlugin.PatchReferencedContract(SamplePlugin.CopyTo(directory), 1, 9);
        var conf = WriteConf("""
            line { port: 0 }
            """);

        await using var host = HostProcess.Start(["--plugins", directory, "-c", conf]);

        Assert.Equal(1, await host.WaitForExitAsync(ExitTimeout));
        Assert.Equal(2, host.Lines.Count);
        Assert.EndsWith($"[ERR] Plugin {SamplePlugin.AssemblyName} skipped: built against contract 1.9, but this broker provides contract {Abstractions.BrokerContract.Version}", host.Lines.First(), StringComparison.Ordinal);
        Assert.Equal($"broker: {conf}:1:1: unknown field \"line\"", host.Lines.Last());
    }

    [Fact(Timeout = 90_000)]
    public async Task Reload_keeps_mapping_the_plugins_block_and_a_changed_block_needs_a_restart()
    {
        var conf = WriteConf("line { port: 0, max_connections: 5 }");
        await using var host = await HostProcess.StartReadyAsync(["-c", conf]);

        File.WriteAllText(conf, "debug: true\nline { port: 0, max_connections: 5 }\n");
        var seen = host.Lines.Count;
        await host.SignalAsync("HUP");
        await host.WaitForLineAsync("[INF] Reloaded server configuration", HostProcess.StartTimeout, seen);

        File.WriteAllText(conf, "debug: true\nline { port: 0, max_connections: 6 }\n");
        seen = host.Lines.Count;
        await host.SignalAsync("HUP");
        var refused = await host.WaitForLineAsync("Failed to reload server configuration", HostProcess.StartTimeout, seen);
        Assert.EndsWith("config reload not supported for line; restart the server to change them", refused, StringComparison.Ordinal);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_plugin_runs_with_its_own_version_of_a_library_the_host_has_and_the_hosts_shared_abstractions()
    {
        SamplePlugin.CopyProbeTo(directory);
        var conf = WriteConf("""
            probe { greeting: "from the file" }
            """);

        await using var host = await HostProcess.StartReadyAsync(["--plugins", directory, "-c", conf]);

        // The probe bound its block with its own Binder, an older major version than the host's.
        Assert.Contains(host.Lines, l => l.EndsWith("[INF] Probe greeting: from the file", StringComparison.Ordinal));
        var hostFolder = Path.GetDirectoryName(HostProcess.HostAssembly)!;
        var hostBinder = System.Reflection.AssemblyName.GetAssemblyName(Path.Combine(hostFolder, "Microsoft.Extensions.Configuration.Binder.dll")).Version!;
        var binder = Report(host, "Microsoft.Extensions.Configuration.Binder");
        Assert.NotEqual(hostBinder.Major.ToString(System.Globalization.CultureInfo.InvariantCulture), binder.Version.Split('.')[0]);
        Assert.Equal(SamplePlugin.ProbeAssemblyName, binder.Context);
        Assert.StartsWith(Path.Combine(directory, SamplePlugin.ProbeAssemblyName) + Path.DirectorySeparatorChar, binder.File, StringComparison.Ordinal);

        // Its folder carries Microsoft.Extensions.Configuration.Abstractions too, but the shared types are the host's.
        foreach (var shared in new[] { "Microsoft.Extensions.Configuration.Abstractions", "Broker.Abstractions" })
        {
            var report = Report(host, shared);
            Assert.Equal("Default", report.Context);
            Assert.Equal(Path.Combine(hostFolder, shared + ".dll"), report.File);
        }
    }

    // "Probe: <assembly> <version> in <context> from <file>", as the probe plugin logs it.
    private static (string Version, string Context, string File) Report(HostProcess host, string assembly)
    {
        var marker = $"[INF] Probe: {assembly} ";
        var line = Assert.Single(host.Lines, l => l.Contains(marker, StringComparison.Ordinal));
        var rest = line[(line.IndexOf(marker, StringComparison.Ordinal) + marker.Length)..];
        var version = rest[..rest.IndexOf(' ', StringComparison.Ordinal)];
        var context = rest[(rest.IndexOf(" in ", StringComparison.Ordinal) + 4)..rest.IndexOf(" from ", StringComparison.Ordinal)];
        return (version, context, rest[(rest.IndexOf(" from ", StringComparison.Ordinal) + 6)..]);
    }

    private string WriteConf(string text)
    {
        var path = Path.Combine(directory, $"broker-{Guid.NewGuid():N}.conf");
        File.WriteAllText(path, text + "\n");
        return path;
    }
}
