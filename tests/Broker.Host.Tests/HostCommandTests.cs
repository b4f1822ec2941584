using System.Text.RegularExpressions;
using Broker.Core;

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
    [InlineData(new[] { "--bogus" }, "broker: flag provided but not defined: --bogus (see --help)")]
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
    [InlineData("BROKER_MAXPAYLOAD", "99999999", "broker: max_payload (99999999) can not be higher than max_pending (67108864)")]
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

        Assert.Equal("broker: max_payload (2000) can not be higher than max_pending (1000)" + Environment.NewLine, error.ToString());
    }

    [Fact]
    public async Task An_unwritable_log_file_exits_with_1()
    {
        var blocker = Path.Combine(directory, "file");
        await File.WriteAllTextAsync(blocker, "");

        Assert.Equal(1, await RunAsync(["-l", Path.Combine(blocker, "broker.log")]));

        Assert.StartsWith($"broker: log file {Path.Combine(blocker, "broker.log")}: ", error.ToString(), StringComparison.Ordinal);
    }

    private Task<int> RunAsync(string[] args, Dictionary<string, string>? environment = null) =>
        BrokerHost.RunAsync(args, new HostEnvironment(directory, environment ?? [], output, error));
}
