using System.Globalization;
using Broker.TestKit;

namespace Broker.Host.Tests.Process;

/// <summary>
/// Signals to the real executable: SIGHUP and --signal reload re-read the configuration file and apply it to live
/// connections; a broken file keeps the old configuration; lame duck mode by signal closes the clients and exits;
/// SIGUSR1 reopens the log file.
/// </summary>
public sealed class ReloadAndSignalTests : IDisposable
{
    private const string Reloaded = "[INF] Reloaded server configuration";
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(15);

    private readonly string directory = Directory.CreateTempSubdirectory("broker-reload-").FullName;

    public void Dispose() => Directory.Delete(directory, recursive: true);

    private string Conf => Path.Combine(directory, "broker.conf");

    [Fact(Timeout = 60_000)]
    public async Task Sighup_changes_a_users_permissions_on_a_live_connection()
    {
        WriteConf(Users(publish: "orders.>"));
        await using var host = await HostProcess.StartReadyAsync(["-c", Conf]);
        await using var client = await ConnectAsync(host, "app", "pw");
        await client.SendAsync("PUB orders.new 2\r\nhi\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        WriteConf(Users(publish: "billing.>"));
        var seen = host.Lines.Count;
        await host.SignalAsync("HUP");
        await host.WaitForLineAsync(Reloaded, HostProcess.StartTimeout, seen);

        // The same connection, not reconnected, now has the new permissions.
        await client.SendAsync("PUB orders.new 2\r\nhi\r\nPUB billing.run 2\r\nok\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"orders.new\"'", "PONG"], (await client.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_broken_file_on_reload_is_logged_and_the_old_configuration_stays()
    {
        WriteConf(Users(publish: "orders.>"));
        await using var host = await HostProcess.StartReadyAsync(["-c", Conf]);
        await using var client = await ConnectAsync(host, "app", "pw");

        File.WriteAllText(Conf, Users(publish: "billing.>") + "\nbogus_key: 1\n");
        await host.SignalAsync("HUP");
        var line = await host.WaitForLineAsync("Failed to reload server configuration", HostProcess.StartTimeout);
        Assert.Contains($"[ERR] Failed to reload server configuration: {Conf}:", line, StringComparison.Ordinal);
        Assert.Contains("unknown field \"bogus_key\"", line, StringComparison.Ordinal);

        // A setting that needs a restart refuses the whole reload too.
        WriteConf(Users(publish: "billing.>") + "\nserver_name: renamed\n");
        var seen = host.Lines.Count;
        await host.SignalAsync("HUP");
        var refused = await host.WaitForLineAsync("Failed to reload server configuration", HostProcess.StartTimeout, seen);
        Assert.Contains("config reload not supported for server_name", refused, StringComparison.Ordinal);

        await client.SendAsync("PUB orders.new 2\r\nhi\r\nPUB billing.run 2\r\nok\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"billing.run\"'", "PONG"], (await client.PingAndCollectAsync()).Lines);
        Assert.False(host.HasExited);
    }

    [Fact(Timeout = 90_000)]
    public async Task Signal_reload_finds_the_broker_through_its_pid_file()
    {
        var pidFile = Path.Combine(directory, "broker.pid");
        WriteConf("max_payload: 1MB\n");
        await using var host = await HostProcess.StartReadyAsync(["-c", Conf, "-P", pidFile]);
        await using var client = await RawClient.ConnectAsync(host.EndPoint("client"));
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");

        WriteConf("max_payload: 16\n");
        await using (var signal = HostProcess.Start(["--signal", "reload=" + pidFile]))
        {
            Assert.Equal(0, await signal.WaitForExitAsync(ExitTimeout));
            Assert.Empty(signal.Lines);
        }

        await host.WaitForLineAsync(Reloaded, HostProcess.StartTimeout);
        Assert.Contains(host.Lines, l => l.EndsWith("[INF] Reloaded: max_payload = 16", StringComparison.Ordinal));
        await client.SendAsync("PUB big 17\r\n12345678901234567\r\n");
        Assert.Equal(["-ERR 'Maximum Payload Violation'"], (await client.PingAndCollectAsync()).Lines);

        // Without "=<pid>", the pid file named by -P (as the running broker was started) is used.
        WriteConf("max_payload: 1MB\ndebug: true\n");
        var seen = host.Lines.Count;
        await using (var signal = HostProcess.Start(["-sl", "reload", "-P", pidFile]))
        {
            Assert.Equal(0, await signal.WaitForExitAsync(ExitTimeout));
        }

        await host.WaitForLineAsync(Reloaded, HostProcess.StartTimeout, seen);

        // Each change is named, as nats-server names it, before the closing line.
        var changes = host.Lines.Skip(seen).Where(l => l.Contains("[INF] Reloaded", StringComparison.Ordinal)).Select(l => l[(l.IndexOf("[INF] ", StringComparison.Ordinal) + 6)..]);
        Assert.Equal(["Reloaded: max_payload = 1048576", "Reloaded: debug = true", "Reloaded server configuration"], changes);

        // debug: true took effect live: a client closing is a Debug event.
        await using (var other = await RawClient.ConnectAsync(host.EndPoint("client")))
        {
            await other.SendAsync("CONNECT {\"verbose\":false}\r\n");
            Assert.Equal(["PONG"], (await other.PingAndCollectAsync()).Lines);
        }

        await host.WaitForLineAsync("[DBG] ", HostProcess.StartTimeout, seen);
    }

    [Fact(Timeout = 60_000)]
    public async Task Trace_turned_on_by_reload_traces_live_connections()
    {
        WriteConf("trace: false\n");
        await using var host = await HostProcess.StartReadyAsync(["-c", Conf]);
        await using var client = await RawClient.ConnectAsync(host.EndPoint("client"));
        await client.SendAsync("CONNECT {\"verbose\":false}\r\nSUB before 1\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        WriteConf("trace: true\n");
        var seen = host.Lines.Count;
        await host.SignalAsync("HUP");
        await host.WaitForLineAsync(Reloaded, HostProcess.StartTimeout, seen);
        Assert.Contains(host.Lines.Skip(seen), l => l.EndsWith("[INF] Reloaded: trace = true", StringComparison.Ordinal));

        await client.SendAsync("SUB after 2\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        await host.WaitForLineAsync("<<- [SUB after 2]", HostProcess.StartTimeout, seen);
        Assert.DoesNotContain(host.Lines, l => l.Contains("[SUB before 1]", StringComparison.Ordinal));
    }

    [Fact(Timeout = 60_000)]
    public async Task Lame_duck_by_signal_tells_and_closes_clients_then_exits()
    {
        var pidFile = Path.Combine(directory, "broker.pid");
        WriteConf("lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"200ms\"\n");
        await using var host = await HostProcess.StartReadyAsync(["-c", Conf, "-P", pidFile, "--ports_file_dir", directory]);
        var portsFile = Harness.PortsFilePath(directory, "Broker.Host", host.Id);
        await Harness.WaitForPortsFileAsync(host, portsFile);
        await using var client = await RawClient.ConnectAsync(host.EndPoint("client"));
        await client.SendAsync("CONNECT {\"verbose\":false,\"protocol\":1}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        await using (var signal = HostProcess.Start(["--signal", "ldm=" + host.Id.ToString(CultureInfo.InvariantCulture)]))
        {
            Assert.Equal(0, await signal.WaitForExitAsync(ExitTimeout));
        }

        // Clients that speak protocol 1 hear about it, then are closed; the process exits on its own.
        var lines = await client.ExpectClosedAsync(TimeSpan.FromSeconds(20));
        Assert.Contains(lines, l => l.StartsWith("INFO ", StringComparison.Ordinal) && l.Contains("\"ldm\":true", StringComparison.Ordinal));
        Assert.Equal(0, await host.WaitForExitAsync(ExitTimeout));
        await host.WaitForLineAsync("Trapped \"SIGUSR2\" signal", TimeSpan.FromSeconds(1));
        Assert.False(File.Exists(portsFile));
        Assert.False(File.Exists(pidFile));
    }

    [Fact(Timeout = 60_000)]
    public async Task Sigusr1_reopens_the_log_file_after_rotation()
    {
        var log = Path.Combine(directory, "broker.log");
        WriteConf($"logfile: \"{log}\"\n");
        await using var host = HostProcess.Start(["-a", "127.0.0.1", "-p", "-1", "-c", Conf]);
        await WaitForFileLineAsync(log, "Broker is ready");

        File.Move(log, log + ".1");
        await host.SignalAsync("USR1");

        await WaitForFileLineAsync(log, "Reopened log file");
        Assert.Contains("Trapped \"SIGUSR1\" signal", await File.ReadAllTextAsync(log + ".1"), StringComparison.Ordinal);
    }

    private static string Users(string publish) =>
        $$"""
        authorization {
          users: [
            { user: app, password: pw, permissions: { publish: "{{publish}}", subscribe: "_INBOX.>" } }
          ]
        }
        """;

    private void WriteConf(string text) => File.WriteAllText(Conf, text);

    private static async Task<RawClient> ConnectAsync(HostProcess host, string user, string password)
    {
        var client = await RawClient.ConnectAsync(host.EndPoint("client"));
        await client.SendAsync($"CONNECT {{\"verbose\":false,\"user\":\"{user}\",\"pass\":\"{password}\"}}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        return client;
    }

    private static async Task WaitForFileLineAsync(string path, string text)
    {
        var deadline = DateTime.UtcNow + HostProcess.StartTimeout;
        while (true)
        {
            if (File.Exists(path))
            {
                await using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
                using var reader = new StreamReader(stream);
                if ((await reader.ReadToEndAsync()).Contains(text, StringComparison.Ordinal))
                {
                    return;
                }
            }

            Assert.True(DateTime.UtcNow < deadline, $"{path} never contained \"{text}\"");
            await Task.Delay(100);
        }
    }
}
