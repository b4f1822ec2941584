using Broker.Host.Configuration;

namespace Broker.Host.Tests.Configuration;

/// <summary>The flag pre-parser: nats-server's spellings and Go's flag syntax, mapped onto configuration keys.</summary>
public sealed class CommandLineTests
{
    [Theory]
    [InlineData("-a 127.0.0.1", "Broker:Host", "127.0.0.1")]
    [InlineData("--addr 10.0.0.1", "Broker:Host", "10.0.0.1")]
    [InlineData("--net ::1", "Broker:Host", "::1")]
    [InlineData("-addr=localhost", "Broker:Host", "localhost")]
    [InlineData("-p 4223", "Broker:Port", "4223")]
    [InlineData("--port 4224", "Broker:Port", "4224")]
    [InlineData("-p -1", "Broker:Port", "-1")]
    [InlineData("--port=-1", "Broker:Port", "-1")]
    [InlineData("-m 8222", "Broker:Monitoring:Port", "8222")]
    [InlineData("--http_port -1", "Broker:Monitoring:Port", "-1")]
    [InlineData("--plugins /opt/broker/plugins", "Broker:PluginsPath", "/opt/broker/plugins")]
    [InlineData("-l /var/log/broker.log", "Broker:LogFile", "/var/log/broker.log")]
    [InlineData("--log=broker.log", "Broker:LogFile", "broker.log")]
    [InlineData("-D", "Broker:Debug", "true")]
    [InlineData("--debug", "Broker:Debug", "true")]
    [InlineData("-D=false", "Broker:Debug", "false")]
    [InlineData("-V", "Broker:Trace", "true")]
    [InlineData("--trace", "Broker:Trace", "true")]
    [InlineData("--user alice", "Broker:Authorization:User", "alice")]
    [InlineData("--pass s3cret", "Broker:Authorization:Password", "s3cret")]
    [InlineData("--auth t0ken", "Broker:Authorization:Token", "t0ken")]
    [InlineData("-c /etc/broker.conf", "Broker:ConfigFile", "/etc/broker.conf")]
    [InlineData("--config=b.conf", "Broker:ConfigFile", "b.conf")]
    [InlineData("-n edge-1", "Broker:ServerName", "edge-1")]
    [InlineData("--name edge-2", "Broker:ServerName", "edge-2")]
    [InlineData("--server_name edge-3", "Broker:ServerName", "edge-3")]
    [InlineData("-P /run/broker.pid", "Broker:PidFile", "/run/broker.pid")]
    [InlineData("--pid broker.pid", "Broker:PidFile", "broker.pid")]
    [InlineData("--ports_file_dir /tmp/ports", "Broker:PortsFileDir", "/tmp/ports")]
    [InlineData("-T=false", "Broker:LogTime", "false")]
    [InlineData("--logtime", "Broker:LogTime", "true")]
    [InlineData("-VV", "Broker:Trace", "true")]
    [InlineData("-js", "Plugins:JetStream:enabled", "true")]
    [InlineData("--jetstream", "Plugins:JetStream:enabled", "true")]
    [InlineData("-sd /tmp/js", "Plugins:JetStream:store_dir", "/tmp/js")]
    [InlineData("--store_dir=/tmp/js", "Plugins:JetStream:store_dir", "/tmp/js")]
    public void Flag_sets_its_configuration_key(string args, string key, string value)
    {
        var commandLine = Parse(args);

        Assert.Null(commandLine.Error);
        Assert.Equal(HostCommand.Run, commandLine.Command);
        Assert.Equal(value, Assert.Single(commandLine.Settings, kv => kv.Key == key).Value);
        Assert.Single(commandLine.Settings);
    }

    [Fact]
    public void DV_turns_on_debug_and_trace()
    {
        var settings = Parse("-DV").Settings;

        Assert.Equal("true", settings["Broker:Debug"]);
        Assert.Equal("true", settings["Broker:Trace"]);
    }

    [Fact]
    public void Switches_take_no_separate_value_and_a_later_flag_wins()
    {
        var settings = Parse("-D -p 1 -a 127.0.0.1 -V --port 2").Settings;

        Assert.Equal("true", settings["Broker:Debug"]);
        Assert.Equal("true", settings["Broker:Trace"]);
        Assert.Equal("127.0.0.1", settings["Broker:Host"]);
        Assert.Equal("2", settings["Broker:Port"]);
    }

    [Theory]
    [InlineData("-v", "Version")]
    [InlineData("--version", "Version")]
    [InlineData("version", "Version")]
    [InlineData("-p 1 version", "Version")]
    [InlineData("-h", "Help")]
    [InlineData("--help", "Help")]
    [InlineData("help", "Help")]
    [InlineData("-v -h", "Version")]
    [InlineData("-h -v", "Version")]
    [InlineData("", "Run")]
    [InlineData("--", "Run")]
    public void Commands(string args, string expected)
    {
        var commandLine = Parse(args);

        Assert.Null(commandLine.Error);
        Assert.Equal(expected, commandLine.Command.ToString());
    }

    [Fact]
    public void The_harness_command_line_parses()
    {
        var commandLine = Parse("-a 127.0.0.1 -p -1 -m -1 -js -sd /tmp/js --ports_file_dir /tmp/ports -c /tmp/a.conf");

        Assert.Null(commandLine.Error);
        Assert.Equal(HostCommand.Run, commandLine.Command);
        Assert.Equal("-1", commandLine.Settings["Broker:Port"]);
        Assert.Equal("-1", commandLine.Settings["Broker:Monitoring:Port"]);
        Assert.Equal("true", commandLine.Settings["Plugins:JetStream:enabled"]);
        Assert.Equal("/tmp/js", commandLine.Settings["Plugins:JetStream:store_dir"]);
        Assert.Equal("/tmp/ports", commandLine.Settings["Broker:PortsFileDir"]);
        Assert.Equal("/tmp/a.conf", commandLine.Settings["Broker:ConfigFile"]);
    }

    [Theory]
    [InlineData("-t -c a.conf", nameof(HostCommand.CheckConfig))]
    [InlineData("-sl reload", nameof(HostCommand.Signal))]
    [InlineData("--signal=ldm=/run/b.pid", nameof(HostCommand.Signal))]
    [InlineData("-t -sl reload", nameof(HostCommand.Signal))]
    [InlineData("-sl reload -h", nameof(HostCommand.Help))]
    [InlineData("-sl reload version", nameof(HostCommand.Version))]
    [InlineData("-t help", nameof(HostCommand.Help))]
    [InlineData("-h -v -t", nameof(HostCommand.Version))]
    [InlineData("-t=false", nameof(HostCommand.Run))]
    public void Commands_win_in_nats_servers_order(string args, string command)
    {
        var commandLine = Parse(args);

        Assert.Null(commandLine.Error);
        Assert.Equal(Enum.Parse<HostCommand>(command), commandLine.Command);
    }

    [Fact]
    public void The_signal_value_is_kept_outside_the_broker_section()
    {
        var settings = Parse("--signal=ldm=/run/b.pid").Settings;

        Assert.Equal("ldm=/run/b.pid", settings[CommandLineFlags.SignalKey]);
        Assert.DoesNotContain(settings.Keys, k => k.StartsWith("Broker:", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("--tls --tlscert s.pem --tlskey s.key", "s.pem", "s.key", null, "false")]
    [InlineData("-tlscert=s.pem -tlskey=s.key", "s.pem", "s.key", null, "false")]
    [InlineData("--tlsverify --tlscert s.pem --tlskey s.key --tlscacert ca.pem", "s.pem", "s.key", "ca.pem", "true")]
    public void Tls_flags_set_what_a_tls_block_sets(string args, string cert, string key, string? ca, string verify)
    {
        var commandLine = Parse(args);

        Assert.Null(commandLine.Error);
        var settings = commandLine.Settings;
        Assert.Equal(TlsFlags.Override, settings[TlsFlags.ModeKey]);
        Assert.Equal(cert, settings["Plugins:Tls:cert_file"]);
        Assert.Equal(key, settings["Plugins:Tls:key_file"]);
        Assert.Equal(ca, settings.GetValueOrDefault("Plugins:Tls:ca_file"));
        Assert.Equal(verify, settings["Plugins:Tls:verify"]);
        Assert.DoesNotContain(settings.Keys, k => k.StartsWith("Command:TlsFlag", StringComparison.Ordinal));
    }

    [Fact]
    public void Tls_false_turns_tls_off_whatever_else_is_given()
    {
        var settings = Parse("--tlscert s.pem -tls=false").Settings;
        Assert.Equal(TlsFlags.Off, settings[TlsFlags.ModeKey]);
        Assert.DoesNotContain(settings.Keys, k => k.StartsWith("Plugins:", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("--tls", "TLS Server certificate must be present and valid")]
    [InlineData("--tlsverify --tlskey s.key", "TLS Server certificate must be present and valid")]
    [InlineData("--tls --tlscert s.pem", "TLS Server private key must be present and valid")]
    public void Tls_flags_need_a_certificate_and_key_as_in_nats_server(string args, string error) => Assert.Equal(error, Parse(args).Error);

    [Fact]
    public void Cluster_flags_become_the_cluster_settings_as_in_nats_server()
    {
        var commandLine = Parse("-p -1 --cluster nats://r:s3cret@127.0.0.1:-1 --cluster_name c --routes nats://127.0.0.1:6222,nats://h:6223 --no_advertise --connect_retries 3 --cluster_advertise h.example:7244");

        Assert.Null(commandLine.Error);
        Assert.Equal("-1", commandLine.Settings["Broker:Port"]);
        Assert.Equal(("127.0.0.1", "-1", "r", "s3cret"), (commandLine.Settings["Broker:Cluster:Host"], commandLine.Settings["Broker:Cluster:Port"], commandLine.Settings["Broker:Cluster:Username"], commandLine.Settings["Broker:Cluster:Password"]));
        Assert.Equal(("c", "true", "3"), (commandLine.Settings["Broker:Cluster:Name"], commandLine.Settings["Broker:Cluster:NoAdvertise"], commandLine.Settings["Broker:Cluster:ConnectRetries"]));
        Assert.Equal("h.example:7244", commandLine.Settings["Broker:Cluster:Advertise"]);
        Assert.Equal(("nats://127.0.0.1:6222", "nats://h:6223"), (commandLine.Settings["Broker:Cluster:Routes:0"], commandLine.Settings["Broker:Cluster:Routes:1"]));
        Assert.DoesNotContain(commandLine.Settings.Keys, k => k.StartsWith("Command:", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("--cluster nats://127.0.0.1", "missing port in address")]
    [InlineData("--cluster nats://u@127.0.0.1:6222", "expected cluster password to be set")]
    public void Cluster_flags_are_refused_as_in_nats_server(string args, string error) => Assert.Equal(error, Parse(args).Error);

    [Theory]
    [InlineData("--bogus", "flag provided but not defined: -bogus")]
    [InlineData("-p 1 -x", "flag provided but not defined: -x")]
    [InlineData("-ms 8443", "flag provided but not defined: -ms")]
    [InlineData("-p", "flag needs an argument: -p")]
    [InlineData("--addr", "flag needs an argument: -addr")]
    [InlineData("-p abc", "invalid value \"abc\" for flag -p: parse error")]
    [InlineData("--http_port=1.5", "invalid value \"1.5\" for flag -http_port: parse error")]
    [InlineData("-D=maybe", "invalid boolean value \"maybe\" for -D: parse error")]
    [InlineData("---p 1", "bad flag syntax: ---p")]
    [InlineData("-=1", "bad flag syntax: -=1")]
    [InlineData("serve", "unrecognized command: \"serve\"")]
    [InlineData("-- -p 1", "unrecognized command: \"-p\"")]
    public void Bad_command_lines_name_the_flag(string args, string error)
    {
        Assert.Equal(error, Parse(args).Error);
    }

    [Fact]
    public void Flags_are_case_sensitive_as_in_nats_server()
    {
        Assert.Equal("flag provided but not defined: -d", Parse("-d").Error);
        Assert.Equal("true", Parse("-D").Settings["Broker:Debug"]);
    }

    [Fact]
    public void Every_flag_is_in_the_usage()
    {
        var usage = CommandLineFlags.Usage("broker");

        Assert.StartsWith("Usage: broker [options]", usage, StringComparison.Ordinal);
        foreach (var name in CommandLineFlags.All.SelectMany(f => f.Names))
        {
            Assert.Contains(name, usage, StringComparison.Ordinal);
        }

        Assert.Contains("    -a, --addr, --net <host>         Bind to host address (default: 0.0.0.0)", usage, StringComparison.Ordinal);
        Assert.Contains("        --user <user>                User required for connections", usage, StringComparison.Ordinal);
    }

    [Fact]
    public void No_two_flags_share_a_spelling()
    {
        var names = CommandLineFlags.All.SelectMany(f => f.Names).Select(n => n.TrimStart('-')).ToList();

        Assert.Equal(names.Count, names.Distinct(StringComparer.Ordinal).Count());
    }

    private static CommandLine Parse(string args) =>
        CommandLine.Parse(args.Split(' ', StringSplitOptions.RemoveEmptyEntries));
}
