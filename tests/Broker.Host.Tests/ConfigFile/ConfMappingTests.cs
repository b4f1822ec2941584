using Broker.Host.Configuration.Conf;
using Broker.Host.Configuration.ConfigFile;
using Broker.Host.Tests.Conf;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// Every key of a nats-server configuration file the broker supports, with its aliases, mapped onto exactly these
/// configuration keys (nothing more), as nats-server's processConfigFileLine reads it.
/// </summary>
public sealed class ConfMappingTests
{
    [Theory]
    [InlineData("listen: 127.0.0.1:4333", "Broker:Host=127.0.0.1", "Broker:Port=4333")]
    [InlineData("listen: \"[::1]:-1\"", "Broker:Host=::1", "Broker:Port=-1")]
    [InlineData("listen: \":4333\"", "Broker:Host=0.0.0.0", "Broker:Port=4333")]
    [InlineData("listen: 4333", "Broker:Port=4333")]
    [InlineData("port: -1", "Broker:Port=-1")]
    [InlineData("host: 127.0.0.1", "Broker:Host=127.0.0.1")]
    [InlineData("net: 127.0.0.1", "Broker:Host=127.0.0.1")]
    [InlineData("server_name: edge-1", "Broker:ServerName=edge-1")]
    [InlineData("debug: true", "Broker:Debug=true")]
    [InlineData("trace: yes", "Broker:Trace=true")]
    [InlineData("trace_verbose: true", "Broker:Trace=true")]
    [InlineData("trace_headers: on", "Broker:Trace=true")]
    [InlineData("logtime: false", "Broker:LogTime=false")]
    [InlineData("logfile: /var/log/broker.log", "Broker:LogFile=/var/log/broker.log")]
    [InlineData("log_file: broker.log", "Broker:LogFile=broker.log")]
    [InlineData("pid_file: /run/broker.pid", "Broker:PidFile=/run/broker.pid")]
    [InlineData("pidfile: broker.pid", "Broker:PidFile=broker.pid")]
    [InlineData("ports_file_dir: /tmp/ports", "Broker:PortsFileDir=/tmp/ports")]
    [InlineData("http: 8222", "Broker:Monitoring:Port=8222")]
    [InlineData("http: \"127.0.0.1:-1\"", "Broker:Monitoring:Host=127.0.0.1", "Broker:Monitoring:Port=-1")]
    [InlineData("http: \":8222\"", "Broker:Monitoring:Port=8222")]
    [InlineData("http_port: 8222", "Broker:Monitoring:Port=8222")]
    [InlineData("monitor_port: -1", "Broker:Monitoring:Port=-1")]
    [InlineData("http_base_path: /monitor", "Broker:Monitoring:BasePath=/monitor")]
    [InlineData("max_control_line: 2KB", "Broker:MaxControlLine=2048")]
    [InlineData("max_payload: 2MB", "Broker:MaxPayload=2097152")]
    [InlineData("max_payload: 1k", "Broker:MaxPayload=1000")]
    [InlineData("max_pending: 100MB", "Broker:MaxPending=104857600")]
    [InlineData("max_connections: 100", "Broker:MaxConnections=100")]
    [InlineData("max_conn: 0", "Broker:MaxConnections=0")]
    [InlineData("max_connections: -5", "Broker:MaxConnections=-5")]
    [InlineData("max_subscriptions: 10", "Broker:MaxSubscriptions=10")]
    [InlineData("max_subs: -1", "Broker:MaxSubscriptions=0")]
    [InlineData("max_sub_tokens: 16", "Broker:MaxSubTokens=16")]
    [InlineData("max_subscription_tokens: 255", "Broker:MaxSubTokens=255")]
    [InlineData("ping_interval: \"30s\"", "Broker:PingInterval=00:00:30")]
    [InlineData("ping_interval: \"1h30m\"", "Broker:PingInterval=01:30:00")]
    [InlineData("ping_max: 5", "Broker:MaxPingsOutstanding=5")]
    [InlineData("write_deadline: \"500ms\"", "Broker:WriteDeadline=00:00:00.5000000")]
    [InlineData("no_header_support: true", "Broker:NoHeaderSupport=true")]
    [InlineData("system_account: SYS", "Broker:SystemAccount=SYS")]
    [InlineData("system: SYS", "Broker:SystemAccount=SYS")]
    [InlineData("no_system_account: true", "Broker:NoSystemAccount=true")]
    [InlineData("no_system: true", "Broker:NoSystemAccount=true")]
    [InlineData("no_sys_acc: true", "Broker:NoSystemAccount=true")]
    [InlineData("max_closed_clients: 50", "Broker:MaxClosedClients=50")]
    [InlineData("lame_duck_duration: \"45s\"", "Broker:LameDuckDuration=00:00:45")]
    [InlineData("lame_duck_grace_period: \"2s\"", "Broker:LameDuckGracePeriod=00:00:02")]
    [InlineData("lame_duck_grace_period: \"0s\"")]
    [InlineData("no_auth_user: svc", "Broker:Authorization:NoAuthUser=svc")]
    [InlineData("allow_non_tls: true", "Plugins:Tls:allow_non_tls=true")]
    [InlineData(
        "tls { cert_file: c.pem, key_file: k.pem, verify: true, timeout: 2.5, cipher_suites: [A, B] }",
        "Plugins:Tls=", "Plugins:Tls:cert_file=c.pem", "Plugins:Tls:key_file=k.pem", "Plugins:Tls:verify=true", "Plugins:Tls:timeout=2.5",
        "Plugins:Tls:cipher_suites:0=A", "Plugins:Tls:cipher_suites:1=B")]
    [InlineData(
        "websocket { port: -1, no_tls: true, tls { cert_file: c.pem } }",
        "Plugins:WebSocket=", "Plugins:WebSocket:port=-1", "Plugins:WebSocket:no_tls=true", "Plugins:WebSocket:tls:cert_file=c.pem")]
    [InlineData("ws { listen: \"127.0.0.1:8080\" }", "Plugins:WebSocket=", "Plugins:WebSocket:listen=127.0.0.1:8080")]
    public void Top_level_keys(string conf, params string[] expected) => AssertMaps(conf, expected);

    [Theory]
    [InlineData("authorization { user: a, password: b }", "Broker:Authorization:User=a", "Broker:Authorization:Password=b")]
    [InlineData(
        "authorization { username: a, pass: b, timeout: 1.5 }",
        "Broker:Authorization:User=a", "Broker:Authorization:Password=b", "Broker:Authorization:Timeout=00:00:01.5000000")]
    [InlineData("authorization { token: t, timeout: 3 }", "Broker:Authorization:Token=t", "Broker:Authorization:Timeout=00:00:03")]
    [InlineData("authorization { token: \"$2a$11$abc\", timeout: \"500ms\" }", "Broker:Authorization:Token=$2a$11$abc", "Broker:Authorization:Timeout=00:00:00.5000000")]
    [InlineData(
        "authorization { users: [ {user: a, password: b, permissions: { publish: x, subscribe: [y, \"z q\"] }}, {user: c} ] }",
        "Broker:Authorization:Users:0:User=a", "Broker:Authorization:Users:0:Password=b",
        "Broker:Authorization:Users:0:Permissions:Publish:Allow:0=x",
        "Broker:Authorization:Users:0:Permissions:Subscribe:Allow:0=y", "Broker:Authorization:Users:0:Permissions:Subscribe:Allow:1=z q",
        "Broker:Authorization:Users:1:User=c")]
    [InlineData(
        "authorization { users: [ {username: a, pass: b, authorization: { pub: { allow: [\"a.>\"], deny: a.secret }, sub: { deny: [\">\"] } }} ] }",
        "Broker:Authorization:Users:0:User=a", "Broker:Authorization:Users:0:Password=b",
        "Broker:Authorization:Users:0:Permissions:Publish:Allow:0=a.>", "Broker:Authorization:Users:0:Permissions:Publish:Deny:0=a.secret",
        "Broker:Authorization:Users:0:Permissions:Subscribe:Deny:0=>")]
    [InlineData(
        "authorization { users: [ {user: a, permission: { import: i, export: e }} ] }",
        "Broker:Authorization:Users:0:User=a",
        "Broker:Authorization:Users:0:Permissions:Publish:Allow:0=i", "Broker:Authorization:Users:0:Permissions:Subscribe:Allow:0=e")]
    [InlineData(
        "authorization { users: [ {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4, permissions: { publish: p }}, {user: b} ] }",
        "Broker:Authorization:Users:0:Nkey=UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4",
        "Broker:Authorization:Users:0:Permissions:Publish:Allow:0=p", "Broker:Authorization:Users:1:User=b")]
    [InlineData(
        "authorization { default_permissions: { publish: p }, users: [ {user: a} ] }",
        "Broker:Authorization:DefaultPermissions:Publish:Allow:0=p", "Broker:Authorization:Users:0:User=a")]
    [InlineData("authorization { default_permission: { subscribe: s } }", "Broker:Authorization:DefaultPermissions:Subscribe:Allow:0=s")]
    [InlineData("authorization { permissions: { subscribe: s } }", "Broker:Authorization:DefaultPermissions:Subscribe:Allow:0=s")]
    public void Authorization_block(string conf, params string[] expected) => AssertMaps(conf, expected);

    [Theory]
    [InlineData("accounts { A: {} }", "Broker:Accounts:0:Name=A")]
    [InlineData("accounts: [A, \"B c\"]", "Broker:Accounts:0:Name=A", "Broker:Accounts:1:Name=B c")]
    [InlineData("accounts [ A ]\nACCOUNTS { B: {} }", "Broker:Accounts:0:Name=A", "Broker:Accounts:1:Name=B")]
    [InlineData("accounts: 1")]
    [InlineData(
        "accounts { A: { nkey: AB5UKNPVHDWBP5WODG742274I3OGY5FM3CBIFCYI4OFEH7Y23GNZPXFE } }",
        "Broker:Accounts:0:Name=A", "Broker:Accounts:0:Nkey=AB5UKNPVHDWBP5WODG742274I3OGY5FM3CBIFCYI4OFEH7Y23GNZPXFE")]
    [InlineData(
        "accounts { A: { users: [ {user: a, password: b, permissions: { publish: x }}, {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4} ] }, B: { users: [ {user: b} ] } }",
        "Broker:Accounts:0:Name=A", "Broker:Accounts:0:Users:0:User=a", "Broker:Accounts:0:Users:0:Password=b",
        "Broker:Accounts:0:Users:0:Permissions:Publish:Allow:0=x",
        "Broker:Accounts:0:Users:1:Nkey=UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4",
        "Broker:Accounts:1:Name=B", "Broker:Accounts:1:Users:0:User=b")]
    [InlineData(
        "accounts { A: { default_permissions: { publish: { deny: \"x.>\" }, subscribe: s }, users: [ {user: a} ] } }",
        "Broker:Accounts:0:Name=A", "Broker:Accounts:0:Users:0:User=a",
        "Broker:Accounts:0:DefaultPermissions:Publish:Deny:0=x.>", "Broker:Accounts:0:DefaultPermissions:Subscribe:Allow:0=s")]
    [InlineData(
        "accounts { A: { limits: { max_connections: 1, max_subscriptions: 2, max_payload: 1KB, max_leafnodes: 4 } } }",
        "Broker:Accounts:0:Name=A", "Broker:Accounts:0:Limits:MaxConnections=1", "Broker:Accounts:0:Limits:MaxSubscriptions=2",
        "Broker:Accounts:0:Limits:MaxPayload=1024", "Broker:Accounts:0:Limits:MaxLeafNodes=4")]
    [InlineData(
        "accounts { A: { LIMITS: { MAX_CONN: -1, max_subs: 0, Max_Pay: 3GB, max_leafs: 5 } } }",
        "Broker:Accounts:0:Name=A", "Broker:Accounts:0:Limits:MaxConnections=-1", "Broker:Accounts:0:Limits:MaxSubscriptions=0",
        "Broker:Accounts:0:Limits:MaxPayload=-1073741824", "Broker:Accounts:0:Limits:MaxLeafNodes=5")]
    [InlineData(
        "authorization { users: [ {user: g} ] }\naccounts { A: { users: [ {user: a} ] } }\nno_auth_user: a",
        "Broker:Authorization:Users:0:User=g", "Broker:Accounts:0:Name=A", "Broker:Accounts:0:Users:0:User=a", "Broker:Authorization:NoAuthUser=a")]
    [InlineData(
        "accounts { A: { exports: [ {stream: \"orders.>\", accounts: [B]}, {stream: \"pub.*\"} ] }, B: { imports: [ {stream: {account: A, subject: \"orders.>\"}, prefix: p}, {stream: {account: A, subject: \"pub.*\"}, to: \"q.$1\"}, {stream: {account: A, subject: \"pub.x\"}} ] } }",
        "Broker:Accounts:0:Name=A", "Broker:Accounts:0:Exports:Streams:0:Subject=orders.>", "Broker:Accounts:0:Exports:Streams:0:Accounts:0=B",
        "Broker:Accounts:0:Exports:Streams:1:Subject=pub.*", "Broker:Accounts:1:Name=B",
        "Broker:Accounts:1:Imports:Streams:0:Account=A", "Broker:Accounts:1:Imports:Streams:0:Subject=orders.>", "Broker:Accounts:1:Imports:Streams:0:Prefix=p",
        "Broker:Accounts:1:Imports:Streams:1:Account=A", "Broker:Accounts:1:Imports:Streams:1:Subject=pub.*", "Broker:Accounts:1:Imports:Streams:1:To=q.$1",
        "Broker:Accounts:1:Imports:Streams:2:Account=A", "Broker:Accounts:1:Imports:Streams:2:Subject=pub.x")]
    [InlineData(
        "accounts { A: { exports: [ {stream: x} ] }, B: { imports: [ {to: q, stream: {account: A, subject: x}, prefix: p, share: true} ] } }",
        "Broker:Accounts:0:Name=A", "Broker:Accounts:0:Exports:Streams:0:Subject=x", "Broker:Accounts:1:Name=B",
        "Broker:Accounts:1:Imports:Streams:0:Account=A", "Broker:Accounts:1:Imports:Streams:0:Subject=x", "Broker:Accounts:1:Imports:Streams:0:Prefix=p")]
    [InlineData("accounts { A: { exports: [ {} ], imports: [] } }", "Broker:Accounts:0:Name=A")]
    [InlineData("accounts { A: { jetstream: enabled } }", "Broker:Accounts:0:Name=A", "Broker:Accounts:0:JetStream:Enabled=true")]
    [InlineData("accounts { A: { JetStream: Disable } }", "Broker:Accounts:0:Name=A", "Broker:Accounts:0:JetStream:Enabled=false")]
    [InlineData("accounts { A: { jetstream: true } }", "Broker:Accounts:0:Name=A", "Broker:Accounts:0:JetStream:Enabled=true")]
    [InlineData(
        "accounts { A: { jetstream: { max_mem: 1MB, max_file: 2G, max_streams: 3, max_consumers: 4, max_ack_pending: 5, mem_max_stream_bytes: 6, store_max_stream_bytes: 7, max_bytes_required: true } } }",
        "Broker:Accounts:0:Name=A", "Broker:Accounts:0:JetStream:Enabled=true", "Broker:Accounts:0:JetStream:MaxMemory=1048576",
        "Broker:Accounts:0:JetStream:MaxStorage=2000000000", "Broker:Accounts:0:JetStream:MaxStreams=3", "Broker:Accounts:0:JetStream:MaxConsumers=4",
        "Broker:Accounts:0:JetStream:MaxAckPending=5", "Broker:Accounts:0:JetStream:MemoryMaxStreamBytes=6",
        "Broker:Accounts:0:JetStream:StorageMaxStreamBytes=7", "Broker:Accounts:0:JetStream:MaxBytesRequired=true")]
    [InlineData(
        "accounts { A: { jetstream: { memory: 1, store: 2, streams: 3, consumers: 4, disk_max_stream_bytes: 5, max_bytes: false } } }",
        "Broker:Accounts:0:Name=A", "Broker:Accounts:0:JetStream:Enabled=true", "Broker:Accounts:0:JetStream:MaxMemory=1",
        "Broker:Accounts:0:JetStream:MaxStorage=2", "Broker:Accounts:0:JetStream:MaxStreams=3", "Broker:Accounts:0:JetStream:MaxConsumers=4",
        "Broker:Accounts:0:JetStream:StorageMaxStreamBytes=5", "Broker:Accounts:0:JetStream:MaxBytesRequired=false")]
    public void Accounts_block(string conf, params string[] expected) => AssertMaps(conf, expected);

    // An account entry that only serves as a variable is no account (nats-server skips it too).
    [Fact]
    public void An_account_entry_used_as_a_variable_is_skipped() =>
        AssertMaps(
            "accounts {\n  QUUX = [ { user: quux } ]\n  quux = { users = $QUUX }\n}",
            "Broker:Accounts:0:Name=quux", "Broker:Accounts:0:Users:0:User=quux");

    // nats-server reads max 0 and expires 0 as its defaults (1 message, 2 minutes) and negatives as unlimited, which
    // ResponsePermissionOptions spells as values <= 0.
    [Theory]
    [InlineData("allow_responses: true", "1", "00:02:00")]
    [InlineData("publish_allow_responses: true", "1", "00:02:00")]
    [InlineData("allow_responses: { max: 0, expires: \"0s\" }", "1", "00:02:00")]
    [InlineData("allow_responses: { max: -1, expires: \"-1s\" }", "-1", "-00:00:01")]
    [InlineData("allow_responses: { max_msgs: 5, ttl: \"1m\" }", "5", "00:01:00")]
    [InlineData("allow_responses: { max_messages: 2, expiration: \"10s\" }", "2", "00:00:10")]
    [InlineData("allow_responses: { max_responses: 3 }", "3", "00:02:00")]
    public void Allow_responses(string permission, string max, string expires) => AssertMaps(
        $"authorization {{ users: [ {{user: a, permissions: {{ {permission} }} }} ] }}",
        "Broker:Authorization:Users:0:User=a",
        $"Broker:Authorization:Users:0:Permissions:AllowResponses:MaxMessages={max}",
        $"Broker:Authorization:Users:0:Permissions:AllowResponses:Expires={expires}");

    [Fact]
    public void Allow_responses_false_grants_nothing() =>
        AssertMaps("authorization { users: [ {user: a, permissions: { allow_responses: false } } ] }", "Broker:Authorization:Users:0:User=a");

    [Fact]
    public void Keys_are_case_insensitive_and_the_last_assignment_wins()
    {
        AssertMaps("PORT: 1\nMax_Payload: 10\nport: 2", "Broker:Port=2", "Broker:MaxPayload=10");
    }

    [Fact]
    public void A_key_used_only_as_a_variable_is_not_unknown()
    {
        AssertMaps("base_port: 4000\nport: $base_port\nauthorization { who: alice, user: $who, password: pw }",
            "Broker:Port=4000", "Broker:Authorization:User=alice", "Broker:Authorization:Password=pw");
    }

    [Fact]
    public void A_duration_in_bare_seconds_is_mapped_with_nats_servers_warning()
    {
        var mapping = Map("ping_interval: 45");

        Assert.Equal("00:00:45", mapping.Settings["Broker:PingInterval"]);
        var warning = Assert.Single(mapping.Diagnostics);
        Assert.Equal(ConfDiagnosticKind.Warning, warning.Kind);
        Assert.Equal("test.conf:1:1: invalid use of field \"ping_interval\": ping_interval should be converted to a duration", warning.ToString());
        Assert.False(mapping.HasErrors);
        Assert.True(mapping.FailsCheck);
    }

    [Fact]
    public void An_empty_file_is_a_warning()
    {
        var mapping = Map("# nothing\n");

        Assert.Equal("test.conf: config has no values or is empty", Assert.Single(mapping.Diagnostics).ToString());
        Assert.Empty(mapping.Settings);
    }

    internal static ConfMapping Map(string conf, PluginBlocks? plugins = null) =>
        ConfMapper.Map(ConfTestKit.Parse(conf), "test.conf", plugins ?? FirstPartyPlugins);

    /// <summary>The blocks the TLS, WebSocket and JetStream plugins read (their attributes), as if all were loaded.</summary>
    internal static PluginBlocks FirstPartyPlugins { get; } = Blocks(
        ("tls", "Tls", true), ("allow_non_tls", "Tls", false), ("websocket", "WebSocket", true), ("ws", "WebSocket", true),
        ("jetstream", "JetStream", true), ("js", "JetStream", true), ("store_dir", "JetStream", false), ("storedir", "JetStream", false));

    /// <summary>Plugin claims: each top-level key, the plugin reading it, and whether it is the plugin's whole block.</summary>
    internal static PluginBlocks Blocks(params (string Key, string PluginId, bool Whole)[] claims)
    {
        var blocks = new PluginBlocks();
        foreach (var (key, pluginId, whole) in claims)
        {
            blocks.Add(key, pluginId, whole);
        }

        return blocks;
    }

    /// <summary>Maps without errors onto exactly these <c>key=value</c> settings.</summary>
    internal static void AssertMaps(string conf, PluginBlocks? plugins, params string[] expected)
    {
        var mapping = Map(conf, plugins);

        Assert.DoesNotContain(mapping.Diagnostics, d => d.Kind == ConfDiagnosticKind.Error);
        Assert.Equal(
            expected.Order(StringComparer.Ordinal),
            mapping.Settings.Select(kv => $"{kv.Key}={kv.Value}").Order(StringComparer.Ordinal));
    }

    private static void AssertMaps(string conf, params string[] expected) => AssertMaps(conf, null, expected);
}
