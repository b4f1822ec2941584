using System.Globalization;
using System.Text.Json;
using Broker.Core;
using Broker.TestKit;

namespace Broker.Host.Tests.Process;

/// <summary>
/// The contract client test harnesses rely on, end to end with the real executable: started as they start
/// nats-server (<c>-a 127.0.0.1 -p -1 -m -1 -js -sd DIR --ports_file_dir DIR -c FILE</c>), the ports file appears
/// with the bound URLs, /healthz answers 200, /varz and /connz describe the live connections, and the files go away
/// when the process exits. The scripts/nats-server launcher does the same under the name harnesses look for.
/// </summary>
public sealed class HarnessContractTests : IDisposable
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(15);

    private readonly string directory = Directory.CreateTempSubdirectory("broker-harness-").FullName;
    private readonly HttpClient http = new() { Timeout = TimeSpan.FromSeconds(10) };

    public void Dispose()
    {
        http.Dispose();
        Directory.Delete(directory, recursive: true);
    }

    [Fact(Timeout = 90_000)]
    public async Task Started_like_a_harness_it_reports_ports_health_varz_and_connz()
    {
        var conf = WriteConf($"server_name: harness-broker\nmax_payload: 512KB\njetstream {{ store_dir: \"{Path.Combine(directory, "js")}\" }}\n");
        var pidFile = Path.Combine(directory, "broker.pid");
        await using var host = HostProcess.Start(HarnessArguments(conf, "-P", pidFile));

        // Started as "dotnet Broker.Host.dll", the host is named after its assembly, as nats-server after argv[0].
        var portsFile = Harness.PortsFilePath(directory, "Broker.Host", host.Id);
        var ports = await Harness.WaitForPortsFileAsync(host, portsFile);
        await Harness.WaitForHealthyAsync(http, ports.MonitoringUri);

        Assert.Equal(
            $"{{\"nats\":[\"nats://127.0.0.1:{ports.NatsEndPoint.Port}\"],\"monitoring\":[\"http://127.0.0.1:{ports.MonitoringUri.Port}\"]}}",
            await File.ReadAllTextAsync(portsFile));
        Assert.Equal(host.Id.ToString(CultureInfo.InvariantCulture), await File.ReadAllTextAsync(pidFile));
        await host.WaitForLineAsync("[INF] Starting JetStream", HostProcess.StartTimeout);

        await using var first = await ConnectAsync(ports, "first");
        await using var second = await ConnectAsync(ports, "second");
        await second.SendAsync("SUB work.> 1\r\n");
        Assert.Equal(["PONG"], (await second.PingAndCollectAsync()).Lines);

        var varz = await Harness.GetJsonAsync(http, ports.MonitoringUri, "/varz");
        Assert.Equal("harness-broker", varz.GetProperty("server_name").GetString());
        Assert.Equal(ports.NatsEndPoint.Port, varz.GetProperty("port").GetInt32());
        Assert.Equal(512 * 1024, varz.GetProperty("max_payload").GetInt32());
        Assert.Equal(2, varz.GetProperty("connections").GetInt32());
        Assert.Equal(BrokerServer.CompatibleNatsServerVersion, varz.GetProperty("version").GetString());

        var connz = await Harness.GetJsonAsync(http, ports.MonitoringUri, "/connz?subs=1");
        Assert.Equal(2, connz.GetProperty("num_connections").GetInt32());
        var connections = connz.GetProperty("connections").EnumerateArray().ToDictionary(c => c.GetProperty("name").GetString()!);
        Assert.Equal(["first", "second"], connections.Keys.Order(StringComparer.Ordinal));
        Assert.Equal(0, connections["first"].GetProperty("subscriptions").GetInt32());
        Assert.Equal(1, connections["second"].GetProperty("subscriptions").GetInt32());
        Assert.Equal(["work.>"], connections["second"].GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()));

        await host.SignalAsync("TERM");
        Assert.Equal(0, await host.WaitForExitAsync(ExitTimeout));
        Assert.False(File.Exists(portsFile), "the ports file outlived the process");
        Assert.False(File.Exists(pidFile), "the pid file outlived the process");
    }

    [Fact(Timeout = 90_000)]
    public async Task The_nats_server_launcher_is_found_by_the_name_harnesses_look_for()
    {
        // A harness resolves "nats-server" on PATH; here, a link of that name to the launcher script.
        var bin = Directory.CreateDirectory(Path.Combine(directory, "bin")).FullName;
        var launcher = Path.Combine(bin, "nats-server");
        File.CreateSymbolicLink(launcher, RepositoryPaths.Combine("scripts", "nats-server"));
        var environment = new Dictionary<string, string> { ["NATS_BROKER_DLL"] = HostProcess.HostAssembly };

        await using (var version = HostProcess.Start(launcher, ["-v"], environment))
        {
            Assert.Equal(0, await version.WaitForExitAsync(ExitTimeout));
            Assert.StartsWith($"nats-server: v{BrokerServer.CompatibleNatsServerVersion} ", Assert.Single(version.Lines), StringComparison.Ordinal);
        }

        var conf = WriteConf("authorization { token: s3cret }\n");
        await using var host = HostProcess.Start(launcher, HarnessArguments(conf), environment);

        // exec kept the process id, so the file the harness waits for is named after this process.
        var portsFile = Harness.PortsFilePath(directory, "nats-server", host.Id);
        var ports = await Harness.WaitForPortsFileAsync(host, portsFile);
        await Harness.WaitForHealthyAsync(http, ports.MonitoringUri);

        await using var client = await RawClient.ConnectAsync(ports.NatsEndPoint);
        Assert.Contains("\"auth_required\":true", client.Info, StringComparison.Ordinal);
        await client.SendAsync("CONNECT {\"auth_token\":\"s3cret\",\"verbose\":false}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        await host.SignalAsync("INT");
        Assert.Equal(0, await host.WaitForExitAsync(ExitTimeout));
        Assert.False(File.Exists(portsFile), "the ports file outlived the process");
    }

    [Fact(Timeout = 60_000)]
    public async Task A_ports_file_directory_that_cannot_be_written_is_logged_and_the_broker_keeps_running()
    {
        var missing = Path.Combine(directory, "missing", "deeper");
        await using var host = await HostProcess.StartReadyAsync(["--ports_file_dir", missing]);

        await host.WaitForLineAsync("[ERR] Error writing ports file (", HostProcess.StartTimeout);
        await using var client = await RawClient.ConnectAsync(host.EndPoint("client"));
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
    }

    private string[] HarnessArguments(string conf, params string[] more) =>
        ["-a", "127.0.0.1", "-p", "-1", "-m", "-1", "-js", "-sd", Path.Combine(directory, "js"), "--ports_file_dir", directory, "-c", conf, .. more];

    private string WriteConf(string text)
    {
        var path = Path.Combine(directory, "harness.conf");
        File.WriteAllText(path, text);
        return path;
    }

    private static async Task<RawClient> ConnectAsync(PortsInfo ports, string name)
    {
        var client = await RawClient.ConnectAsync(ports.NatsEndPoint);
        await client.SendAsync($"CONNECT {JsonSerializer.Serialize(new { verbose = false, name })}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        return client;
    }
}
