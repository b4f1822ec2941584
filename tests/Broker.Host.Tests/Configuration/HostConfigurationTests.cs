using Broker.Host.Configuration;
using Broker.Host.Configuration.ConfigFile;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Tests.Configuration;

/// <summary>
/// Configuration layers and binding: defaults &lt; appsettings.json &lt; BROKER_ environment variables &lt; flags, onto
/// BrokerOptions (section Broker) and plugin sections (Plugins:&lt;Id&gt;).
/// </summary>
public sealed class HostConfigurationTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-config-").FullName;

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Fact]
    public void Defaults_without_any_source()
    {
        var settings = Bind();

        Assert.Equal("0.0.0.0", settings.Broker.Host);
        Assert.Equal(4222, settings.Broker.Port);
        Assert.Null(settings.Broker.Monitoring.Port);
        Assert.Null(settings.Host.PluginsPath);
        Assert.False(settings.Host.Debug);
        Assert.False(settings.Host.Trace);
        Assert.Null(settings.Host.LogFile);
    }

    [Fact]
    public void Each_layer_overrides_the_one_below()
    {
        WriteAppSettings("""
            {
              "Broker": { "Port": 1001, "ServerName": "json", "MaxPayload": 2048, "Host": "127.0.0.1" },
              "Plugins": { "Line": { "Port": "7001", "MaxConnections": "3" } }
            }
            """);
        var environment = new Dictionary<string, string>
        {
            ["BROKER_PORT"] = "1002",
            ["BROKER_SERVERNAME"] = "env",
            ["BROKER_PLUGINS__LINE__PORT"] = "7002",
        };

        var configuration = Build(environment, "-p", "1003");
        var settings = HostSettings.Bind(configuration);

        Assert.Equal(1003, settings.Broker.Port);
        Assert.Equal("env", settings.Broker.ServerName);
        Assert.Equal(2048, settings.Broker.MaxPayload);
        Assert.Equal("127.0.0.1", settings.Broker.Host);
        Assert.Equal("7002", configuration["Plugins:Line:Port"]);
        Assert.Equal("3", configuration["Plugins:Line:MaxConnections"]);
    }

    [Fact]
    public void Environment_overrides_appsettings_and_flags_override_environment()
    {
        WriteAppSettings("""{ "Broker": { "Debug": false, "LogFile": "json.log" } }""");

        var fromEnvironment = Bind(new() { ["BROKER_DEBUG"] = "true", ["BROKER_LOGFILE"] = "env.log" });
        var fromFlags = Bind(new() { ["BROKER_DEBUG"] = "true", ["BROKER_LOGFILE"] = "env.log" }, "-D=false", "-l", "flag.log");

        Assert.True(fromEnvironment.Host.Debug);
        Assert.Equal("env.log", fromEnvironment.Host.LogFile);
        Assert.False(fromFlags.Host.Debug);
        Assert.Equal("flag.log", fromFlags.Host.LogFile);
    }

    [Fact]
    public void Environment_variables_map_nested_sections_and_arrays()
    {
        var settings = Bind(new()
        {
            ["BROKER_AUTHORIZATION__USERS__0__USER"] = "alice",
            ["BROKER_AUTHORIZATION__USERS__0__PASSWORD"] = "a",
            ["BROKER_AUTHORIZATION__USERS__1__USER"] = "bob",
            ["BROKER_AUTHORIZATION__USERS__1__PASSWORD"] = "b",
            ["BROKER_MONITORING__PORT"] = "8222",
            ["broker_maxpending"] = "2000000",
            ["BROKERX_PORT"] = "1",
            ["OTHER_PORT"] = "2",
        });

        Assert.Equal(["alice", "bob"], settings.Broker.Authorization.Users.Select(u => u.User));
        Assert.Equal("b", settings.Broker.Authorization.Users[1].Password);
        Assert.Equal(8222, settings.Broker.Monitoring.Port);
        Assert.Equal(2_000_000, settings.Broker.MaxPending);
        Assert.Equal(4222, settings.Broker.Port);
    }

    [Fact]
    public void Appsettings_binds_nested_broker_options()
    {
        WriteAppSettings("""
            {
              "Broker": {
                "PluginsPath": "/opt/plugins",
                "WriteDeadline": "00:00:03",
                "Authorization": {
                  "Users": [ { "User": "svc", "Password": "pw", "Permissions": { "Publish": { "Allow": [ "svc.>" ] } } } ],
                  "NoAuthUser": "svc"
                }
              }
            }
            """);

        var settings = Bind();

        Assert.Equal("/opt/plugins", settings.Host.PluginsPath);
        Assert.Equal(TimeSpan.FromSeconds(3), settings.Broker.WriteDeadline);
        var user = Assert.Single(settings.Broker.Authorization.Users);
        Assert.Equal("svc", user.User);
        Assert.Equal(["svc.>"], user.Permissions!.Publish!.Allow);
        Assert.Equal("svc", settings.Broker.Authorization.NoAuthUser);
    }

    // As nats-server: -1 is a random port (BrokerOptions' 0), a client port of 0 the default 4222, a monitoring port
    // of 0 no monitoring.
    [Theory]
    [InlineData(new[] { "-p", "-1" }, 0, null)]
    [InlineData(new[] { "-p", "-1", "-m", "-1" }, 0, 0)]
    [InlineData(new[] { "-p", "0", "-m", "0" }, 4222, null)]
    [InlineData(new string[0], 4222, null)]
    [InlineData(new[] { "-p", "4333", "-m", "8333" }, 4333, 8333)]
    public void Ports_are_read_as_nats_server_reads_them(string[] args, int port, int? monitoringPort)
    {
        var settings = Bind(null, args);

        Assert.Equal(port, settings.Broker.Port);
        Assert.Equal(monitoringPort, settings.Broker.Monitoring.Port);
    }

    [Fact]
    public void Authorization_flags()
    {
        var single = Bind(null, "--user", "u", "--pass", "p");
        var token = Bind(null, "--auth", "t");

        Assert.Equal("u", single.Broker.Authorization.User);
        Assert.Equal("p", single.Broker.Authorization.Password);
        Assert.Equal("t", token.Broker.Authorization.Token);
    }

    [Theory]
    [InlineData("""{ "Broker": { "Port": "abc" } }""", "Broker:Port: invalid value \"abc\" (expected Int32)")]
    [InlineData("""{ "Broker": { "Port": 70000 } }""", "port: 70000 is not a valid port number")]
    [InlineData("""{ "Broker": { "MaxPayload": 2000000, "MaxPending": 1000000 } }""", "max_payload (2000000) cannot be higher than max_pending (1000000)")]
    [InlineData("""{ "Broker": { "Monitoring": { "Port": 99999 } } }""", "http_port: 99999 is not a valid port number")]
    [InlineData("""{ "Broker": { "Prot": 1 } }""", "unknown setting(s) 'Prot' (not options of BrokerOptions)")]
    [InlineData("""{ "Broker": { "Authorization": { "Tokn": "x" } } }""", "unknown setting(s) 'Tokn' (not options of AuthorizationOptions)")]
    [InlineData("""{ "Broker": { "Debug": "loud" } }""", "Broker:Debug: invalid value \"loud\" (expected Boolean)")]
    [InlineData("""{ "Broker": { "Authorization": { "User": "u" } } }""", "authorization: user and password must be set together")]
    public void Bad_values_are_one_line_naming_the_setting(string json, string message)
    {
        WriteAppSettings(json);

        var ex = Assert.Throws<HostConfigurationException>(() => Bind());

        Assert.Equal(message, ex.Message);
    }

    [Fact]
    public void Malformed_appsettings_names_the_file()
    {
        WriteAppSettings("""{ "Broker": { "Port": 1, } """);

        var ex = Assert.Throws<HostConfigurationException>(() => Bind());

        Assert.StartsWith(Path.Combine(directory, "appsettings.json") + ": ", ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', ex.Message);
    }

    private void WriteAppSettings(string json) => File.WriteAllText(Path.Combine(directory, "appsettings.json"), json);

    private IConfigurationRoot Build(Dictionary<string, string>? environment, params string[] args)
    {
        var commandLine = CommandLine.Parse(args);
        Assert.Null(commandLine.Error);
        return HostConfiguration.Build(directory, environment ?? [], commandLine.Settings, _ => PluginBlocks.None).Configuration;
    }

    private HostSettings Bind(Dictionary<string, string>? environment = null, params string[] args) =>
        HostSettings.Bind(Build(environment, args));
}
