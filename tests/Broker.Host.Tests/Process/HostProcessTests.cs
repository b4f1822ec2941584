using System.Text.RegularExpressions;
using Broker.Abstractions;
using Broker.Core;
using Broker.Host.Tests.Plugins;
using Broker.TestKit;

namespace Broker.Host.Tests.Process;

/// <summary>
/// The real executable as a child process: plugins loaded from folders, a NATS client and the sample line-protocol
/// plugin talking both ways, refused and broken plugins, the log file, signals and exit codes.
/// </summary>
public sealed class HostProcessTests : IDisposable
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(15);

    private readonly string plugins = SamplePlugin.CreatePluginsFolder();

    public void Dispose() => SamplePlugin.Delete(plugins);

    [Fact(Timeout = 60_000)]
    public async Task Nats_client_and_line_plugin_exchange_messages_and_requests_both_ways()
    {
        // No --plugins: the default folder next to the executable holds the sample, placed there by the build.
        await using var host = await HostProcess.StartReadyAsync();
        await using var nats = await ConnectNatsAsync(host);
        await using var line = await RawClient.ConnectAsync(host.EndPoint("line"), readInfo: false);

        // NATS → line.
        await ExpectOkAsync(line, "SUB line.in");
        await nats.SendAsync("PUB line.in 11\r\nhello line!\r\n");
        Assert.Equal("MSG line.in hello line!", await line.ReadLineAsync());

        // line → NATS.
        await nats.SendAsync("SUB nats.in 1\r\n");
        Assert.Equal(["PONG"], (await nats.PingAndCollectAsync()).Lines);
        await ExpectOkAsync(line, "PUB nats.in hello nats");
        Assert.Equal("MSG nats.in 1 10", await nats.ReadLineAsync());
        Assert.Equal("hello nats", await nats.ReadLineAsync());

        // line requests, NATS replies.
        await nats.SendAsync("SUB svc.nats 2\r\n");
        Assert.Equal(["PONG"], (await nats.PingAndCollectAsync()).Lines);
        await line.SendAsync("REQ svc.nats ping\r\n");
        var request = Regex.Match(await nats.ReadLineAsync(), @"^MSG svc\.nats 2 (?<reply>\S+) 4$");
        Assert.True(request.Success);
        Assert.Equal("ping", await nats.ReadLineAsync());
        var inbox = request.Groups["reply"].Value;
        await nats.SendAsync($"PUB {inbox} 4\r\npong\r\n");
        Assert.Equal($"MSG {inbox} pong", await line.ReadLineAsync());

        // NATS requests, line replies.
        await ExpectOkAsync(line, "SUB svc.line");
        await nats.SendAsync("SUB _INBOX.test 3\r\nPUB svc.line _INBOX.test 5\r\nquery\r\n");
        Assert.Equal("REQ svc.line _INBOX.test query", await line.ReadLineAsync());
        await ExpectOkAsync(line, "PUB _INBOX.test answer");
        Assert.Equal("MSG _INBOX.test 3 6", await nats.ReadLineAsync());
        Assert.Equal("answer", await nats.ReadLineAsync());

        // A request nobody serves.
        await line.SendAsync("REQ nobody.home hi\r\n");
        Assert.Equal("ERR no responders", await line.ReadLineAsync());
    }

    [Fact(Timeout = 60_000)]
    public async Task Plugin_middleware_refuses_connections_beyond_its_configured_count()
    {
        // The limit comes from the plugin's configuration section, here through the environment.
        await using var host = await HostProcess.StartReadyAsync(environment: new Dictionary<string, string> { ["BROKER_PLUGINS__LINE__MAX_CONNECTIONS"] = "1" });
        var endPoint = host.EndPoint("line");

        var first = await RawClient.ConnectAsync(endPoint, readInfo: false);
        await ExpectOkAsync(first, "SUB a");
        await using (var second = await RawClient.ConnectAsync(endPoint, readInfo: false))
        {
            Assert.Equal(["ERR too many connections"], await second.ExpectClosedAsync());
        }

        await first.DisposeAsync();

        // Once the first connection is gone its slot is free again (the close is noticed asynchronously).
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (true)
        {
            await using var next = await RawClient.ConnectAsync(endPoint, readInfo: false);
            await next.SendAsync("SUB b\r\n");
            var answer = await next.ReadLineAsync();
            if (answer == "OK")
            {
                break;
            }

            Assert.Equal("ERR too many connections", answer);
            Assert.True(DateTime.UtcNow < deadline, "The slot of the closed connection was never freed.");
            await Task.Delay(100);
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task Plugin_built_against_a_newer_contract_is_refused_and_NATS_is_still_served()
    {
        SamplePlugin.PatchReferencedContract(SamplePlugin.CopyTo(plugins), 1, 7);

        await using var host = await HostProcess.StartReadyAsync(["--plugins", plugins]);

        var refusal = Assert.Single(host.Lines, l => l.Contains("[ERR]", StringComparison.Ordinal));
        Assert.EndsWith($"[ERR] Plugin {SamplePlugin.AssemblyName} skipped: built against contract 1.7, but this broker provides contract {BrokerContract.Version}", refusal, StringComparison.Ordinal);
        Assert.False(host.HasListener("line"));
        await using var nats = await ConnectNatsAsync(host);
        Assert.Equal(["PONG"], (await nats.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task Broken_plugin_folders_are_skipped_and_good_plugins_still_load()
    {
        Directory.CreateDirectory(Path.Combine(plugins, "Empty"));
        SamplePlugin.CreateGarbage(plugins, "Garbage");
        SamplePlugin.CopyTo(plugins);

        await using var host = await HostProcess.StartReadyAsync(["--plugins", plugins]);

        var errors = host.Lines.Where(l => l.Contains("[ERR]", StringComparison.Ordinal)).ToList();
        Assert.Equal(2, errors.Count);
        Assert.Contains(errors, e => e.Contains("[ERR] Plugin Empty skipped: ", StringComparison.Ordinal));
        Assert.Contains(errors, e => e.Contains("[ERR] Plugin Garbage skipped: ", StringComparison.Ordinal));
        Assert.Contains(host.Lines, l => l.EndsWith("[INF] Loaded plugin Line 1.2.0.0", StringComparison.Ordinal));
        await using var line = await RawClient.ConnectAsync(host.EndPoint("line"), readInfo: false);
        await ExpectOkAsync(line, "PUB x y");
    }

    [Theory(Timeout = 60_000)]
    [InlineData("TERM", "SIGTERM")]
    [InlineData("INT", "SIGINT")]
    public async Task Signal_stops_the_host_gracefully_with_exit_code_0(string signal, string logged)
    {
        await using var host = await HostProcess.StartReadyAsync();
        var nats = await ConnectNatsAsync(host);

        await host.SignalAsync(signal);

        Assert.Equal(0, await host.WaitForExitAsync(ExitTimeout));
        Assert.Contains(host.Lines, l => l.Contains($"[INF] Trapped \"{logged}\" signal", StringComparison.Ordinal));
        Assert.Contains(host.Lines, l => l.EndsWith("[INF] Server is stopped", StringComparison.Ordinal));

        // The client was disconnected by the stop, not left hanging.
        await nats.ExpectClosedAsync();
        await nats.DisposeAsync();
    }

    [Fact(Timeout = 60_000)]
    public async Task Log_flag_writes_the_log_to_the_file_in_nats_server_format()
    {
        var logFile = Path.Combine(plugins, "logs", "broker.log");
        await using var host = HostProcess.Start(["-a", "127.0.0.1", "-p", "-1", "-D", "-l", logFile]);

        var ready = await WaitForFileLineAsync(logFile, "Broker is ready");

        Assert.Matches(@"^\[" + host.Id + @"\] \d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}\.\d{6} \[INF\] Broker is ready$", ready);
        Assert.Contains(await File.ReadAllLinesAsync(logFile), l => l.Contains("[DBG] Plugin Line 1.2.0.0 found in ", StringComparison.Ordinal));
        Assert.Empty(host.Lines);
        await host.SignalAsync("TERM");
        Assert.Equal(0, await host.WaitForExitAsync(ExitTimeout));
    }

    [Fact(Timeout = 60_000)]
    public async Task Version_flag_prints_one_line_and_exits_0()
    {
        await using var host = HostProcess.Start(["-v"]);

        Assert.Equal(0, await host.WaitForExitAsync(ExitTimeout));
        Assert.Equal([$"nats-server: v{BrokerServer.CompatibleNatsServerVersion} (broker {BrokerServer.Version})"], host.Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task Bad_value_exits_with_1_and_one_line_without_a_stack_trace()
    {
        await using var host = HostProcess.Start(["-a", "127.0.0.1", "-p", "70000"]);

        Assert.Equal(1, await host.WaitForExitAsync(ExitTimeout));
        Assert.Equal(["broker: port: 70000 is not a valid port number"], host.Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_port_in_use_is_one_error_line_and_exit_code_1()
    {
        await using var first = await HostProcess.StartReadyAsync();
        var port = first.EndPoint("client").Port.ToString(System.Globalization.CultureInfo.InvariantCulture);

        await using var second = HostProcess.Start(["-a", "127.0.0.1", "-p", port]);

        Assert.Equal(1, await second.WaitForExitAsync(ExitTimeout));

        // nats-server's fatal line, with the address and Go's error text.
        var fatal = Assert.Single(second.Lines, l => l.Contains("[FTL] ", StringComparison.Ordinal) || l.Contains("[ERR] ", StringComparison.Ordinal));
        Assert.EndsWith($"[FTL] Error listening on port: 127.0.0.1:{port}, \"listen tcp 127.0.0.1:{port}: bind: address already in use\"", fatal, StringComparison.Ordinal);
        Assert.DoesNotContain(second.Lines, l => l.TrimStart().StartsWith("at ", StringComparison.Ordinal));
    }

    [Fact(Timeout = 60_000)]
    public async Task Tls_flags_start_a_tls_listener_for_a_dotnet_client()
    {
        var certificates = TestCertificates.Shared;
        await using var host = await HostProcess.StartReadyAsync(["--tls", "--tlscert", certificates.ServerCertFile, "--tlskey", certificates.ServerKeyFile]);

        await using (var raw = await RawClient.ConnectAsync(host.EndPoint("client")))
        {
            Assert.Contains("\"tls_required\":true", raw.Info, StringComparison.Ordinal);
        }

        await using var client = await NatsClients.ConnectAsync(
            $"tls://127.0.0.1:{host.EndPoint("client").Port}",
            configure: o => o with { TlsOpts = new NATS.Client.Core.NatsTlsOpts { CaFile = certificates.CaFile } });
        await using var sub = await client.SubscribeCoreAsync<string>("over.tls");
        await client.PublishAsync("over.tls", "secret");
        Assert.Equal("secret", (await sub.NextAsync()).Data);
    }

    [Fact(Timeout = 60_000)]
    public async Task Tls_flags_replace_the_files_tls_block_and_tls_false_turns_it_off()
    {
        var certificates = TestCertificates.Shared;
        var conf = Path.Combine(plugins, "tls.conf");
        File.WriteAllText(conf, "tls { cert_file: \"/nonexistent/cert.pem\", key_file: \"/nonexistent/key.pem\", timeout: 3 }\n");

        await using (var replaced = await HostProcess.StartReadyAsync(["-c", conf, "--tlscert", certificates.ServerCertFile, "--tlskey", certificates.ServerKeyFile]))
        {
            await using var raw = await RawClient.ConnectAsync(replaced.EndPoint("client"));
            Assert.Contains("\"tls_required\":true", raw.Info, StringComparison.Ordinal);
        }

        await using var off = await HostProcess.StartReadyAsync(["-c", conf, "-tls=false"]);
        await using var plain = await RawClient.ConnectAsync(off.EndPoint("client"));
        Assert.DoesNotContain("tls_required", plain.Info, StringComparison.Ordinal);
        await plain.SendAsync("CONNECT {\"verbose\":false}\r\n");
        Assert.Equal(["PONG"], (await plain.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task Cluster_flags_start_a_cluster_member()
    {
        await using var host = await HostProcess.StartReadyAsync(["--cluster", "nats://127.0.0.1:-1", "--cluster_name", "c", "--routes", $"nats://127.0.0.1:{Ports.GetFreePort()}"]);

        Assert.Contains(host.Lines, l => l.EndsWith("[INF] Cluster name is c", StringComparison.Ordinal));
        Assert.Contains(host.Lines, l => l.Contains("[INF] Listening for route connections on 127.0.0.1:", StringComparison.Ordinal));
        Assert.DoesNotContain(host.Lines, l => l.Contains("Clustering", StringComparison.Ordinal));
        await using var client = await ConnectNatsAsync(host);
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task DV_traces_the_protocol_as_nats_server_does()
    {
        await using var host = await HostProcess.StartReadyAsync(["-DV"]);
        await using var client = await RawClient.ConnectAsync(host.EndPoint("client"));
        await client.SendAsync("CONNECT {\"verbose\":false,\"headers\":true,\"name\":\"t\",\"user\":\"u\",\"pass\":\"secret\"}\r\n"
            + "SUB foo 1\r\nSUB bar q 2\r\nPUB foo reply 5\r\nhello\r\nHPUB foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\nUNSUB 1\r\n");
        Assert.Equal(["MSG foo 1 reply 5", "hello", "HMSG foo 1 12 14", "NATS/1.0", "", "hi", "PONG"], (await client.PingAndCollectAsync()).Lines);

        var prefix = $"127.0.0.1:{client.LocalPort} - cid:";
        await host.WaitForLineAsync("<-> [DELSUB 1]", HostProcess.StartTimeout);
        await host.WaitForLineAsync("->> [PONG]", HostProcess.StartTimeout);
        var traced = host.Lines.Where(l => l.Contains("[TRC] ", StringComparison.Ordinal)).Select(l => l[(l.IndexOf("[TRC] ", StringComparison.Ordinal) + 6)..]).ToList();
        Assert.All(traced, l => Assert.StartsWith(prefix, l, StringComparison.Ordinal));
        var lines = traced.Select(l => l[(l.IndexOf(" - ", prefix.Length, StringComparison.Ordinal) + 3)..]).ToList();
        Assert.Equal(
            [
                "<<- [CONNECT {\"verbose\":false,\"headers\":true,\"name\":\"t\",\"user\":\"u\",\"pass\":\"[REDACTED]\"}]",
                "\"t\" - <<- [SUB foo 1]",
                "\"t\" - <<- [SUB bar q 2]",
                "\"t\" - <<- [PUB foo reply 5]",
                "\"t\" - <<- MSG_PAYLOAD: [\"hello\"]",
                "\"t\" - ->> [MSG foo 1 reply 5]",
                "\"t\" - <<- [HPUB foo 12 14]",
                "\"t\" - <<- MSG_PAYLOAD: [\"NATS/1.0\\r\\n\\r\\nhi\"]",
                "\"t\" - ->> [HMSG foo 1 12 14]",
                "\"t\" - <<- [UNSUB 1]",
                "\"t\" - <-> [DELSUB 1]",
                "\"t\" - <<- [PING]",
                "\"t\" - ->> [PONG]",
            ],
            lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task Without_trace_nothing_is_traced()
    {
        await using var host = await HostProcess.StartReadyAsync(["-D"]);
        await using var client = await ConnectNatsAsync(host);
        await client.SendAsync("SUB foo 1\r\nPUB foo 2\r\nhi\r\n");
        Assert.Equal(["MSG foo 1 2", "hi", "PONG"], (await client.PingAndCollectAsync()).Lines);
        Assert.DoesNotContain(host.Lines, l => l.Contains("[TRC]", StringComparison.Ordinal));
    }

    [Fact(Timeout = 60_000)]
    public async Task A_monitoring_port_in_use_cannot_start_monitoring()
    {
        await using var first = await HostProcess.StartReadyAsync(["-m", "-1"]);
        var port = first.EndPoint("monitor").Port.ToString(System.Globalization.CultureInfo.InvariantCulture);

        await using var second = HostProcess.Start(["-a", "127.0.0.1", "-p", "-1", "-m", port]);

        Assert.Equal(1, await second.WaitForExitAsync(ExitTimeout));
        var fatal = Assert.Single(second.Lines, l => l.Contains("[FTL] ", StringComparison.Ordinal) || l.Contains("[ERR] ", StringComparison.Ordinal));
        Assert.EndsWith($"[FTL] Can't start monitoring: can't listen to the monitor port: listen tcp 127.0.0.1:{port}: bind: address already in use", fatal, StringComparison.Ordinal);
    }

    [Fact(Timeout = 60_000)]
    public async Task Usage_and_errors_name_the_program_as_it_was_started()
    {
        // A launcher names the program (scripts/nats-server does); an apphost or a link is named by argv[0].
        var environment = new Dictionary<string, string> { ["BROKER_EXECUTABLENAME"] = "nats-server" };
        await using (var help = HostProcess.Start(["-h"], environment))
        {
            Assert.Equal(0, await help.WaitForExitAsync(ExitTimeout));
            Assert.Equal("Usage: nats-server [options]", help.Lines.First());
        }

        await using var bad = HostProcess.Start(["-p", "abc"], environment);
        Assert.Equal(1, await bad.WaitForExitAsync(ExitTimeout));
        Assert.Equal(["nats-server: invalid value \"abc\" for flag -p: parse error (see --help)"], bad.Lines);
    }

    private static async Task<RawClient> ConnectNatsAsync(HostProcess host)
    {
        var client = await RawClient.ConnectAsync(host.EndPoint("client"));
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
        return client;
    }

    private static async Task ExpectOkAsync(RawClient line, string command)
    {
        await line.SendAsync(command + "\r\n");
        Assert.Equal("OK", await line.ReadLineAsync());
    }

    private static async Task<string> WaitForFileLineAsync(string path, string text)
    {
        var deadline = DateTime.UtcNow + HostProcess.StartTimeout;
        while (DateTime.UtcNow < deadline)
        {
            if (File.Exists(path))
            {
                await using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
                using var reader = new StreamReader(stream);
                var line = (await reader.ReadToEndAsync()).Split('\n').Select(l => l.TrimEnd('\r')).FirstOrDefault(l => l.Contains(text, StringComparison.Ordinal));
                if (line is not null)
                {
                    return line;
                }
            }

            await Task.Delay(100);
        }

        throw new TimeoutException($"{path} never contained \"{text}\".");
    }
}
