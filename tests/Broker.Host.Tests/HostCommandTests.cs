using System.Text.RegularExpressions;
using Broker.Core;
using Broker.Host.Tests.Plugins;

namespace Broker.Host.Tests;

/// <summary>
/// The executable's answers that come before anything starts, run in-process: -v, -h, and bad flags or settings
/// (exit code 1, one line on standard error naming the problem, nothing on standard output).
/// </summary>
public sealed class HostCommandTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-host-").FullName;
    private readonly StringWriter output = new();
    private readonly StringWriter error = new();

    public void Dispose()
    {
        Directory.Delete(directory, recursive: true);
        output.Dispose();
        error.Dispose();
    }

    [Theory]
    [InlineData("-v")]
    [InlineData("--version")]
    [InlineData("version")]
    public async Task Version_prints_the_matched_nats_server_version_first(string flag)
    {
        Assert.Equal(0, await RunAsync([flag]));

        var line = output.ToString();
        Assert.Equal($"nats-server: v{BrokerServer.CompatibleNatsServerVersion} (broker {BrokerServer.Version}){Environment.NewLine}", line);

        // What harnesses such as nats.net's test runner do: the first vX.Y.Z is the version they gate features on.
        Assert.Equal(BrokerServer.CompatibleNatsServerVersion, Regex.Match(line, @"v(\d+\.\d+\.\d+)").Groups[1].Value);
        Assert.Empty(error.ToString());
    }

    [Fact]
    public async Task Help_prints_the_usage()
    {
        Assert.Equal(0, await RunAsync(["-h"]));

        Assert.StartsWith("Usage: broker [options]", output.ToString(), StringComparison.Ordinal);
        Assert.Contains("--plugins <dir>", output.ToString(), StringComparison.Ordinal);
        Assert.Empty(error.ToString());
    }

    [Theory]
    [InlineData(new[] { "--bogus" }, "broker: flag provided but not defined: -bogus (see --help)")]
    [InlineData(new[] { "-p", "abc" }, "broker: invalid value \"abc\" for flag -p: parse error (see --help)")]
    [InlineData(new[] { "-p" }, "broker: flag needs an argument: -p (see --help)")]
    [InlineData(new[] { "-p", "70000" }, "broker: port: 70000 is not a valid port number")]
    [InlineData(new[] { "-m", "-7" }, "broker: http_port: -7 is not a valid port number")]
    [InlineData(new[] { "--user", "u" }, "broker: authorization: user and password must be set together")]
    [InlineData(new[] { "--auth", "t", "--user", "u", "--pass", "p" }, "broker: authorization: can not have a token and users at the same time")]
    public async Task Bad_flags_exit_with_1_and_one_line(string[] args, string message)
    {
        Assert.Equal(1, await RunAsync(args));

        Assert.Equal(message + Environment.NewLine, error.ToString());
        Assert.Empty(output.ToString());
    }

    [Theory]
    [InlineData("BROKER_PORT", "abc", "broker: Broker:Port: invalid value \"abc\" (expected Int32)")]
    [InlineData("BROKER_PORT", "70000", "broker: port: 70000 is not a valid port number")]
    [InlineData("BROKER_MAXPAYLOAD", "99999999", "broker: max_payload (99999999) cannot be higher than max_pending (67108864)")]
    public async Task Bad_environment_values_exit_with_1_and_one_line(string name, string value, string message)
    {
        Assert.Equal(1, await RunAsync([], new() { [name] = value }));

        Assert.Equal(message + Environment.NewLine, error.ToString());
    }

    [Fact]
    public async Task Bad_appsettings_value_exits_with_1_and_one_line()
    {
        await File.WriteAllTextAsync(Path.Combine(directory, "appsettings.json"), """{ "Broker": { "MaxPayload": 2000, "MaxPending": 1000 } }""");

        Assert.Equal(1, await RunAsync([]));

        Assert.Equal("broker: max_payload (2000) cannot be higher than max_pending (1000)" + Environment.NewLine, error.ToString());
    }

    [Fact]
    public async Task An_unwritable_log_file_exits_with_1()
    {
        var blocker = Path.Combine(directory, "file");
        await File.WriteAllTextAsync(blocker, "");

        Assert.Equal(1, await RunAsync(["-l", Path.Combine(blocker, "broker.log")]));

        Assert.StartsWith($"broker: log file {Path.Combine(blocker, "broker.log")}: ", error.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Check_config_accepts_a_valid_file_with_nats_servers_wording()
    {
        var conf = WriteConf("listen: 127.0.0.1:4333\nauthorization { users: [ {user: a, password: b} ] }\n");

        Assert.Equal(0, await RunAsync(["-t", "-c", conf]));

        Assert.Equal(
            $"broker: configuration file {conf} is valid{Environment.NewLine}",
            error.ToString());
        Assert.Empty(output.ToString());
    }

    [Fact]
    public async Task Check_config_lists_every_problem_and_exits_with_1()
    {
        var conf = WriteConf("port: 4333\nbogus: 1\nocsp: true\n");

        Assert.Equal(1, await RunAsync(["-t", "-c", conf]));

        var lines = error.ToString().TrimEnd().Split(Environment.NewLine);
        Assert.Equal($"broker: {conf}:2:1: unknown field \"bogus\"", lines[0]);
        Assert.StartsWith($"{conf}:3:1: \"ocsp\": not supported (", lines[1], StringComparison.Ordinal);
        Assert.Equal(2, lines.Length);
    }

    [Fact]
    public async Task Check_config_accepts_accounts_and_refuses_an_import_not_exported()
    {
        var accounts = "accounts {\n  A: { users: [ {user: a, password: pa} ], limits: { max_conn: 2 } }\n  B: { users: [ {user: b, password: pb} ] }\n}\n";
        var valid = WriteConf(accounts);
        var imports = WriteConf("accounts {\n  A: { users: [ {user: a, password: pa} ] }\n  C: {\n    imports: [ { service: { account: A, subject: x } } ]\n  }\n}\n");

        Assert.Equal(0, await RunAsync(["-t", "-c", valid]));
        Assert.Equal($"broker: configuration file {valid} is valid{Environment.NewLine}", error.ToString());

        var streams = WriteConf("accounts {\n  A: { exports: [ {stream: \"o.>\", accounts: [C]} ] }\n  C: { imports: [ { stream: { account: A, subject: \"o.>\" }, prefix: p } ] }\n}\n");
        error.GetStringBuilder().Clear();
        Assert.Equal(0, await RunAsync(["-t", "-c", streams]));
        Assert.Equal($"broker: configuration file {streams} is valid{Environment.NewLine}", error.ToString());

        error.GetStringBuilder().Clear();
        Assert.Equal(1, await RunAsync(["-t", "-c", imports]));
        Assert.Equal(
            $"broker: {imports}:1:1: Error adding service import \"x\": service import not authorized{Environment.NewLine}",
            error.ToString());
    }

    [Fact]
    public async Task Check_config_fails_on_nats_servers_own_warnings_as_nats_server_does()
    {
        var conf = WriteConf("ping_interval: 60\n");

        Assert.Equal(1, await RunAsync(["-t", "-c", conf]));

        Assert.Equal(
            $"broker: {conf}:1:1: invalid use of field \"ping_interval\": ping_interval should be converted to a duration{Environment.NewLine}",
            error.ToString());
    }

    [Theory]
    [InlineData(new[] { "-t" }, "broker: must specify [-c, --config] option to check configuration file syntax")]
    [InlineData(new[] { "-t", "-c", "/nonexistent/broker.conf" }, "broker: error opening config file '/nonexistent/broker.conf': no such file or directory")]
    public async Task Check_config_without_a_readable_file_fails(string[] args, string message)
    {
        Assert.Equal(1, await RunAsync(args));

        Assert.Equal(message + Environment.NewLine, error.ToString());
    }

    [Fact]
    public async Task A_tls_block_without_the_tls_plugin_is_refused()
    {
        // Never serve clear text to clients the file says must use TLS.
        var conf = WriteConf("tls { cert_file: server.pem, key_file: server.key }\n");

        Assert.Equal(1, await RunAsync(["-t", "-c", conf]));

        Assert.Equal($"broker: {conf}:1:1: \"tls\" is read by plugin Tls, which is not loaded{Environment.NewLine}", error.ToString());
    }

    [Fact]
    public async Task Check_config_points_a_plugins_refusal_at_the_files_line_unless_another_layer_gave_the_value()
    {
        var plugins = Path.Combine(directory, "plugins");
        SamplePlugin.CopyTo(plugins);
        var conf = WriteConf("line {\n  max_connections: lots\n}\n");

        Assert.Equal(1, await RunAsync(["-t", "-c", conf]));
        Assert.Equal($"broker: {conf}:2:3: Plugins:Line:max_connections: expected integer, but got 'lots'{Environment.NewLine}", error.ToString());

        error.GetStringBuilder().Clear();
        Assert.Equal(1, await RunAsync(["-t", "-c", conf], new() { ["BROKER_PLUGINS__LINE__MAX_CONNECTIONS"] = "many" }));
        Assert.Equal($"broker: Plugins:Line:max_connections: expected integer, but got 'many'{Environment.NewLine}", error.ToString());

        error.GetStringBuilder().Clear();
        Assert.Equal(0, await RunAsync(["-t", "-c", conf], new() { ["BROKER_PLUGINS__LINE__MAX_CONNECTIONS"] = "10" }));
        Assert.Equal($"broker: configuration file {conf} is valid{Environment.NewLine}", error.ToString());
    }

    [Theory]
    [InlineData("bogus=1", "broker: unknown signal \"bogus\"")]
    [InlineData("reload=abc", "broker: invalid pid: abc")]
    [InlineData("reload=1=2", "broker: invalid signal parameters: [2]")]
    [InlineData("reload", "broker: no pid given: use --signal <signal>=<pid or pid file>, or name the pid file with -P or pid_file")]
    public async Task Signal_without_a_usable_pid_exits_with_1(string value, string message)
    {
        Assert.Equal(1, await RunAsync(["--signal", value]));

        Assert.Equal(message + Environment.NewLine, error.ToString());
    }

    [Fact]
    public async Task Signal_reads_the_pid_file_named_by_the_configuration()
    {
        var pidFile = Path.Combine(directory, "missing.pid");
        var conf = WriteConf($"pid_file: \"{pidFile}\"\n");

        Assert.Equal(1, await RunAsync(["-sl", "reload", "-c", conf]));

        Assert.Equal($"broker: no broker process found: cannot read pid file {pidFile}{Environment.NewLine}", error.ToString());
    }

    [Fact]
    public async Task Signal_to_a_process_that_does_not_exist_names_the_error()
    {
        var pidFile = Path.Combine(directory, "stale.pid");
        await File.WriteAllTextAsync(pidFile, "2147483647");

        Assert.Equal(1, await RunAsync(["-sl", "ldm=" + pidFile]));

        Assert.StartsWith("broker: signal \"ldm\" 2147483647: ", error.ToString(), StringComparison.Ordinal);
    }

    private string WriteConf(string text)
    {
        var path = Path.Combine(directory, $"broker-{Guid.NewGuid():N}.conf");
        File.WriteAllText(path, text);
        return path;
    }

    private Task<int> RunAsync(string[] args, Dictionary<string, string>? environment = null) =>
        BrokerHost.RunAsync(args, new HostEnvironment(directory, environment ?? [], output, error));
}
