using Broker.Host.Configuration;
using Broker.Host.Configuration.ConfigFile;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// The configuration file as a layer of the host configuration: defaults &lt; appsettings.json &lt; file &lt;
/// environment &lt; flags, and bound onto the broker's options.
/// </summary>
public sealed class ConfigFileLayerTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-conf-layer-").FullName;

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Fact]
    public void The_file_sits_above_appsettings_and_below_environment_and_flags()
    {
        File.WriteAllText(Path.Combine(directory, "appsettings.json"), """
            { "Broker": { "Port": 1001, "ServerName": "json", "MaxPayload": 2048, "MaxControlLine": 1111, "Host": "127.0.0.1" } }
            """);
        var conf = Write("port: 1002\nserver_name: file\nmax_payload: 4096\nmax_pending: 10MB\n");
        var environment = new Dictionary<string, string> { ["BROKER_PORT"] = "1003", ["BROKER_MAXPENDING"] = "20000000" };

        var settings = Bind(environment, "-c", conf, "-p", "1004");

        Assert.Equal(1004, settings.Broker.Port);
        Assert.Equal(20_000_000, settings.Broker.MaxPending);
        Assert.Equal("file", settings.Broker.ServerName);
        Assert.Equal(4096, settings.Broker.MaxPayload);
        Assert.Equal(1111, settings.Broker.MaxControlLine);
        Assert.Equal("127.0.0.1", settings.Broker.Host);
    }

    [Fact]
    public void The_environment_can_name_the_file()
    {
        var conf = Write("server_name: from-file\n");

        var settings = Bind(new() { ["BROKER_CONFIGFILE"] = conf });

        Assert.Equal("from-file", settings.Broker.ServerName);
        Assert.Equal(conf, settings.Host.ConfigFile);
    }

    [Fact]
    public void A_realistic_file_binds_onto_the_options()
    {
        var conf = Write("""
            # A broker for one team.
            listen: 127.0.0.1:-1
            http: -1
            server_name: team-a
            max_payload: 512KB
            max_pending: 8MB
            max_connections: 100
            max_subs: 50
            ping_interval: "20s"
            ping_max: 3
            write_deadline: "2s"
            lame_duck_duration: "40s"
            lame_duck_grace_period: "5s"
            debug: true
            logtime: false
            pid_file: broker.pid
            ports_file_dir: /tmp
            authorization {
              timeout: 0.75
              default_permissions: { subscribe: { deny: "secret.>" } }
              users: [
                { user: svc, password: "$2a$11$3kQ2x7bH0k5Vb1vKUD3ZuevpO0Zy2k8ZQy9e7C5l9U2fG6pHw0X7y",
                  permissions: { publish: { allow: ["svc.>", "_INBOX.>"] }, subscribe: ["svc.requests", "svc.work workers"], allow_responses: { max: 2, expires: "1m" } } }
                { user: viewer, password: pw }
              ]
            }
            no_auth_user: viewer
            """);

        var settings = Bind(null, "-c", conf);
        var broker = settings.Broker;

        Assert.Equal(("127.0.0.1", 0), (broker.Host, broker.Port));
        Assert.Equal(("127.0.0.1", 0), (broker.Monitoring.Host, broker.Monitoring.Port));
        Assert.Equal("team-a", broker.ServerName);
        Assert.Equal((512 * 1024, 8L * 1024 * 1024), (broker.MaxPayload, broker.MaxPending));
        Assert.Equal((100, 50), (broker.MaxConnections, broker.MaxSubscriptions));
        Assert.Equal((TimeSpan.FromSeconds(20), 3, TimeSpan.FromSeconds(2)), (broker.PingInterval, broker.MaxPingsOutstanding, broker.WriteDeadline));
        Assert.Equal((TimeSpan.FromSeconds(40), TimeSpan.FromSeconds(5)), (broker.LameDuckDuration, broker.LameDuckGracePeriod));
        Assert.Equal(TimeSpan.FromSeconds(0.75), broker.Authorization.Timeout);
        Assert.Equal("viewer", broker.Authorization.NoAuthUser);
        Assert.Equal(["secret.>"], broker.Authorization.DefaultPermissions!.Subscribe!.Deny);
        var svc = broker.Authorization.Users[0];
        Assert.Equal("svc", svc.User);
        Assert.StartsWith("$2a$11$", svc.Password, StringComparison.Ordinal);
        Assert.Equal(["svc.>", "_INBOX.>"], svc.Permissions!.Publish!.Allow);
        Assert.Equal(["svc.requests", "svc.work workers"], svc.Permissions.Subscribe!.Allow);
        Assert.Equal((2, TimeSpan.FromMinutes(1)), (svc.Permissions.AllowResponses!.MaxMessages, svc.Permissions.AllowResponses.Expires));
        Assert.Equal("viewer", broker.Authorization.Users[1].User);
        Assert.Null(broker.Authorization.Users[1].Permissions);
        Assert.True(settings.Host.Debug);
        Assert.False(settings.Host.LogTime);
        Assert.Equal(("broker.pid", "/tmp"), (settings.Host.PidFile, settings.Host.PortsFileDir));
    }

    [Fact]
    public void Accounts_bind_onto_the_options()
    {
        var conf = Write("""
            authorization { users: [ { user: g, password: pw } ] }
            accounts {
              A: {
                nkey: AB5UKNPVHDWBP5WODG742274I3OGY5FM3CBIFCYI4OFEH7Y23GNZPXFE
                default_permissions: { subscribe: { deny: "secret.>" } }
                users: [
                  { user: a, password: pa, permissions: { publish: "a.>" } }
                  { nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4 }
                ]
                limits: { max_conn: 2, max_subs: 3, max_pay: 1KB, max_leafs: 4 }
                jetstream: { max_mem: 1MB, max_streams: 2, max_bytes_required: true }
              }
              B: { users: [ { user: b, password: pb } ] }
              C: { jetstream: enabled }
            }
            """);

        var broker = Bind(null, "-c", conf).Broker;

        Assert.Equal("g", Assert.Single(broker.Authorization.Users).User);
        Assert.Equal(["A", "B", "C"], broker.Accounts.Select(a => a.Name));
        var a = broker.Accounts[0];
        Assert.Equal("AB5UKNPVHDWBP5WODG742274I3OGY5FM3CBIFCYI4OFEH7Y23GNZPXFE", a.Nkey);
        Assert.Equal(["secret.>"], a.DefaultPermissions!.Subscribe!.Deny);
        Assert.Equal(("a", "pa"), (a.Users[0].User, a.Users[0].Password));
        Assert.Equal(["a.>"], a.Users[0].Permissions!.Publish!.Allow);
        Assert.Equal("UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4", a.Users[1].Nkey);
        Assert.Equal((2, 3, 1024, 4), (a.Limits.MaxConnections, a.Limits.MaxSubscriptions, a.Limits.MaxPayload, a.Limits.MaxLeafNodes));
        var b = broker.Accounts[1];
        Assert.Equal(("b", "pb"), (b.Users.Single().User, b.Users.Single().Password));
        Assert.Null(b.DefaultPermissions);
        Assert.Equal((-1, -1, -1, -1), (b.Limits.MaxConnections, b.Limits.MaxSubscriptions, b.Limits.MaxPayload, b.Limits.MaxLeafNodes));
        Assert.Equal((true, 1_048_576L, -1L, 2, -1, true), (a.JetStream!.Enabled, a.JetStream.MaxMemory, a.JetStream.MaxStorage, a.JetStream.MaxStreams, a.JetStream.MaxConsumers, a.JetStream.MaxBytesRequired));
        Assert.Null(b.JetStream);
        Assert.Equal((true, -1L, -1), (broker.Accounts[2].JetStream!.Enabled, broker.Accounts[2].JetStream!.MaxMemory, broker.Accounts[2].JetStream!.MaxStreams));
    }

    [Fact]
    public void Stream_exports_and_imports_bind_onto_the_options()
    {
        var conf = Write("""
            accounts {
              A: { exports: [ { stream: "orders.>", accounts: [B] }, { stream: "pub.*" } ] }
              B: { imports: [ { stream: { account: A, subject: "orders.>" }, prefix: p }, { stream: { account: A, subject: "pub.*" }, to: "q.$1" } ] }
            }
            """);

        var broker = Bind(null, "-c", conf).Broker;

        var exports = broker.Accounts[0].Exports.Streams;
        Assert.Equal("orders.>", exports[0].Subject);
        Assert.Equal(["B"], exports[0].Accounts!);
        Assert.Equal("pub.*", exports[1].Subject);
        Assert.Null(exports[1].Accounts);
        var imports = broker.Accounts[1].Imports.Streams;
        Assert.Equal(("A", "orders.>", "p", null), (imports[0].Account, imports[0].Subject, imports[0].Prefix, imports[0].To));
        Assert.Equal(("A", "pub.*", null, "q.$1"), (imports[1].Account, imports[1].Subject, imports[1].Prefix, imports[1].To));
        broker.Validate();
    }

    [Fact]
    public void Monitoring_listens_on_the_client_host_unless_given_its_own()
    {
        var sameHost = Bind(null, "-a", "127.0.0.1", "-m", "-1");
        var ownHost = Bind(null, "-c", Write("host: 127.0.0.1\nhttp: \"127.0.0.2:8222\"\n"));

        Assert.Equal("127.0.0.1", sameHost.Broker.Monitoring.Host);
        Assert.Equal("127.0.0.2", ownHost.Broker.Monitoring.Host);
    }

    [Fact]
    public void Errors_in_the_file_list_every_problem()
    {
        var conf = Write("port: 4222\nbogus: 1\nmax_payload: \"big\"\n");

        var ex = Assert.Throws<HostConfigurationException>(() => Bind(null, "-c", conf));

        Assert.Equal(
            $"{conf}:2:1: unknown field \"bogus\"{Environment.NewLine}{conf}:3:1: interface conversion: interface {{}} is string, not int64",
            ex.Message);
    }

    [Fact]
    public void Validation_of_the_bound_options_still_applies()
    {
        var conf = Write("max_payload: 2MB\nmax_pending: 1MB\n");

        var ex = Assert.Throws<HostConfigurationException>(() => Bind(null, "-c", conf));

        Assert.Equal("max_payload (2097152) cannot be higher than max_pending (1048576)", ex.Message);
    }

    [Fact]
    public void Variables_come_from_the_hosts_environment()
    {
        var conf = Write("authorization { token: $TEAM_TOKEN }\n");

        var settings = Bind(new() { ["TEAM_TOKEN"] = "s3cret" }, "-c", conf);

        Assert.Equal("s3cret", settings.Broker.Authorization.Token);
    }

    private string Write(string text)
    {
        var path = Path.Combine(directory, $"broker-{Guid.NewGuid():N}.conf");
        File.WriteAllText(path, text);
        return path;
    }

    private HostSettings Bind(Dictionary<string, string>? environment, params string[] args)
    {
        var commandLine = CommandLine.Parse(args);
        Assert.Null(commandLine.Error);
        return HostSettings.Bind(HostConfiguration.Build(directory, environment ?? [], commandLine.Settings, _ => PluginBlocks.None).Configuration);
    }
}
