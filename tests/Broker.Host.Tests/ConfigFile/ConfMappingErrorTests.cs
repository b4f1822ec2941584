using Broker.Host.Configuration.ConfigFile;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// What a configuration file cannot say: wrong types and values with nats-server's messages at file:line:column,
/// unknown keys, security settings the broker cannot enforce (errors), features it does not have yet (one notice
/// each, the rest of the file still applies).
/// </summary>
public sealed class ConfMappingErrorTests
{
    [Theory]
    [InlineData("port: \"abc\"", "test.conf:1:1: interface conversion: interface {} is string, not int64")]
    [InlineData("debug: 1", "test.conf:1:1: interface conversion: interface {} is int64, not bool")]
    [InlineData("host: 1", "test.conf:1:1: interface conversion: interface {} is int64, not string")]
    [InlineData("tls: 1", "test.conf:1:1: interface conversion: interface {} is int64, not map[string]interface {}")]
    [InlineData("max_payload: [ 1 ]", "test.conf:1:1: interface conversion: interface {} is []interface {}, not int64")]
    [InlineData("\n  bogus: 1", "test.conf:2:3: unknown field \"bogus\"")]
    [InlineData("listen: true", "test.conf:1:1: expected port or host:port, got bool")]
    [InlineData("listen: \"127.0.0.1\"", "test.conf:1:1: could not parse address string \"127.0.0.1\"")]
    [InlineData("listen: \"::1:4222\"", "test.conf:1:1: could not parse address string \"::1:4222\"")]
    [InlineData("listen: \"h:x\"", "test.conf:1:1: could not parse port \"x\"")]
    [InlineData("http: \"127.0.0.1\"", "test.conf:1:1: could not parse address string \"127.0.0.1\"")]
    [InlineData("max_sub_tokens: 0", "test.conf:1:1: max_sub_tokens value can not be negative")]
    [InlineData("max_sub_tokens: 300", "test.conf:1:1: max_sub_tokens value is too big")]
    [InlineData("max_payload: 3GB", "test.conf:1:1: max_payload value is too big")]
    [InlineData("max_control_line: 3GB", "test.conf:1:1: max_control_line value is too big")]
    [InlineData("server_name: \"a b\"", "test.conf:1:1: server name cannot contain spaces")]
    [InlineData("write_deadline: \"abc\"", "test.conf:1:1: error parsing write_deadline: time: invalid duration \"abc\"")]
    [InlineData("ping_interval: \"5\"", "test.conf:1:1: error parsing ping_interval: time: missing unit in duration \"5\"")]
    [InlineData("lame_duck_duration: \"10s\"", "test.conf:1:1: invalid lame_duck_duration of 10s, minimum is 30 seconds")]
    [InlineData("lame_duck_duration: \"x\"", "test.conf:1:1: error parsing lame_duck_duration: time: invalid duration \"x\"")]
    [InlineData("lame_duck_grace_period: \"-1s\"", "test.conf:1:1: invalid lame_duck_grace_period, needs to be positive")]
    [InlineData("allow_non_tls: 1", "test.conf:1:1: interface conversion: interface {} is int64, not bool")]
    public void Top_level_errors(string conf, string error) => AssertErrors(conf, error);

    [Theory]
    [InlineData("authorization {\n  bogus: 1\n}", "test.conf:2:3: unknown field \"bogus\"")]
    [InlineData("authorization { user: a, pass: b, token: c }", "test.conf:1:1: Cannot have a user/pass and token")]
    [InlineData("authorization { user: a, pass: b, users: [] }", "test.conf:1:1: Can not have a single user/pass and a users array")]
    [InlineData("authorization { token: t, users: [] }", "test.conf:1:1: Can not have a token and a users array")]
    [InlineData("authorization { users: [ {user: a}, {user: a} ] }", "test.conf:1:1: Duplicate user \"a\" detected")]
    [InlineData("authorization { users: [ {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4}, {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4} ] }", "test.conf:1:1: Duplicate nkey \"UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4\" detected")]
    [InlineData("authorization {\n  users: [\n    {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4, user: a}\n  ]\n}", "test.conf:3:5: Nkey users do not take usernames or passwords")]
    [InlineData("authorization {\n  users: [\n    {password: a}\n  ]\n}", "test.conf:3:5: User entry requires a user")]
    [InlineData("authorization { users: 1 }", "test.conf:1:17: Expected users field to be an array, got 1")]
    [InlineData("authorization { users: [ 1 ] }", "test.conf:1:26: Expected user entry to be a map/struct, got 1")]
    [InlineData("authorization {\n  users: [\n    {user: a, bogus: 1 }\n  ]\n}", "test.conf:3:15: unknown field \"bogus\"")]
    [InlineData("authorization {\n  timeout: true\n}", "test.conf:2:3: error parsing authorization config, 'timeout' wrong type")]
    [InlineData("authorization {\n  timeout: \"x\"\n}", "test.conf:2:3: error parsing authorization config, 'timeout' time: invalid duration \"x\"")]
    public void Authorization_errors(string conf, string error) => AssertErrors(conf, error);

    [Theory]
    [InlineData("permissions: 1", "test.conf:2:13: Expected permissions to be a map/struct, got 1")]
    [InlineData("permissions: { bogus: 1 }", "test.conf:2:28: Unknown field \"bogus\" parsing permissions")]
    [InlineData("permissions: { publish: { allow: [\"a..b\"] } }", "test.conf:2:39: subject \"a..b\" is not a valid subject")]
    [InlineData("permissions: { publish: \"a b\" }", "test.conf:2:28: subject \"a b\" is not a valid subject")]
    [InlineData("permissions: { subscribe: [\"a q..\"] }", "test.conf:2:28: queue \"q..\" is not a valid queue")]
    [InlineData("permissions: { subscribe: [\"a.. q\"] }", "test.conf:2:28: subject \"a..\" is not a valid subject")]
    [InlineData("permissions: { subscribe: [\"a b c\"] }", "test.conf:2:28: subject \"a b c\" is not a valid subject")]
    [InlineData("permissions: { publish: 1 }", "test.conf:2:28: Expected subject permissions to be a subject, or array of subjects, got int64")]
    [InlineData("permissions: { publish: [\"a\", 1 ] }", "test.conf:2:43: Subject in permissions array cannot be cast to string")]
    [InlineData(
        "permissions: { publish: { allow: x, bogus: 1 } }",
        "test.conf:2:49: Unknown field name \"bogus\" parsing subject permissions, only 'allow' or 'deny' are permitted")]
    [InlineData("permissions: { allow_responses: 1 }", "test.conf:2:28: error parsing response permissions, expected a boolean or a map")]
    [InlineData("permissions: { allow_responses: { expires: 5 } }", "test.conf:2:47: error parsing expires, not a duration string")]
    [InlineData("permissions: { allow_responses: { expires: \"x\" } }", "test.conf:2:47: error parsing expires: time: invalid duration \"x\"")]
    [InlineData("permissions: { allow_responses: { bogus: 1 } }", "test.conf:2:47: Unknown field \"bogus\" parsing permissions")]
    public void Permission_errors(string permissions, string error) =>
        AssertErrors($"authorization {{ users: [\n  {{user: a, {permissions} }}\n] }}", error);

    [Theory]
    [InlineData("accounts { $G: {} }", "test.conf:1:12: \"$G\" is a Reserved Account")]
    [InlineData("accounts { \"$G\": {} }", "test.conf:1:12: \"$G\" is a Reserved Account")]
    [InlineData("accounts [ A, \"$G\" ]", "test.conf:1:15: \"$G\" is a Reserved Account")]
    [InlineData("accounts [ A, B, A ]", "test.conf:1:18: Duplicate Account Entry: A")]
    [InlineData("accounts [ 1, A ]", "test.conf:1:12: interface conversion: interface {} is int64, not string")]
    [InlineData("accounts { A: 1 }", "test.conf:1:12: Expected map entries for accounts")]
    [InlineData("accounts { A: { bogus: 1 } }", "test.conf:1:17: unknown field \"bogus\"")]
    [InlineData("accounts { A: { default_permission: {} } }", "test.conf:1:17: unknown field \"default_permission\"")]
    [InlineData("accounts { A: { nkey: AABC } }", "test.conf:1:17: Not a valid public nkey for an account: \"AABC\"")]
    [InlineData("accounts { A: { nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4 } }", "test.conf:1:17: Not a valid public nkey for an account: \"UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4\"")]
    [InlineData("accounts { A: { nkey: 1 } }", "test.conf:1:17: Not a valid public nkey for an account: '\\x01'")]
    [InlineData("accounts { A: { limits: 1 } }", "test.conf:1:17: Expected account limits to be a map/struct, got 1")]
    [InlineData("accounts { A: { limits: { bogus: 1 } } }", "test.conf:1:27: Unknown field \"bogus\" parsing account limits")]
    [InlineData("accounts { A: { limits: { max_conn: \"x\" } } }", "test.conf:1:27: interface conversion: interface {} is string, not int64")]
    [InlineData("accounts { A: { default_permissions: 1 } }", "test.conf:1:17: Expected permissions to be a map/struct, got 1")]
    [InlineData("accounts { A: { users: 1 } }", "test.conf:1:17: Expected users field to be an array, got 1")]
    [InlineData("accounts { A: { users: [ {nkey: UABC} ] } }", "test.conf:1:27: Not a valid public nkey for a user")]
    [InlineData("accounts { A: { users: [ {password: x} ] } }", "test.conf:1:26: User entry requires a user")]
    [InlineData("accounts { A: { users: [ {user: a}, {user: a} ] } }", "test.conf:1:17: Duplicate user \"a\" detected")]
    [InlineData("accounts { A: { users: [ {user: a} ] }, B: { users: [ {user: a} ] } }", "test.conf:1:46: Duplicate user \"a\" detected")]
    [InlineData(
        "accounts { A: { users: [ {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4} ] }, B: { users: [ {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4} ] } }",
        "test.conf:1:101: Duplicate nkey \"UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4\" detected")]
    public void Accounts_errors(string conf, string error) => AssertErrors(conf, error);

    // The authorization block and the accounts are checked against each other; whichever comes later in the file
    // reports, at its own position (nats-server reads top-level keys in no fixed order; this is its file-order answer).
    [Theory]
    [InlineData("authorization { token: x }\naccounts { A: { users: [ {user: a} ] } }", "test.conf:2:17: Can not have a token and accounts")]
    [InlineData("authorization { user: x, password: y }\naccounts { A: { users: [ {user: a} ] } }", "test.conf:2:17: Can not have a single user/pass and accounts")]
    [InlineData("accounts { A: { users: [ {user: a} ] } }\nauthorization { token: x }", "test.conf:2:1: Can not have a token and a users array")]
    [InlineData("accounts { A: { users: [ {user: a} ] } }\nauthorization { user: x, password: y }", "test.conf:2:1: Can not have a single user/pass and a users array")]
    [InlineData("authorization { users: [ {user: a} ] }\naccounts { A: { users: [ {user: a} ] } }", "test.conf:2:17: Duplicate user \"a\" detected")]
    [InlineData("accounts { A: { users: [ {user: a} ] } }\nauthorization { users: [ {user: a} ] }", "test.conf:2:1: Duplicate user \"a\" detected")]
    public void Authorization_and_accounts_errors(string conf, string error) => AssertErrors(conf, error);

    // An export's account token position (a JWT-era setting) is not built: the key is the error.
    [Fact]
    public void Account_token_position_is_an_error()
    {
        var mapping = ConfMappingTests.Map("accounts {\n  A: {\n    users: [ {user: a} ]\n    exports: [ { stream: \"a.>\", account_token_position: 2 } ]\n  }\n}");

        var error = Assert.Single(mapping.Diagnostics);
        Assert.Equal(ConfDiagnosticKind.Error, error.Kind);
        Assert.Matches("^test.conf:4:33: \"account_token_position\": not supported yet \\(account token positions in exports\\); ", error.ToString());
    }

    // Service export and import keys, with nats-server 2.9.10's texts and positions (checked with nats-server -t).
    [Theory]
    [InlineData("exports: [ {service: x, response_type: bogus} ]", "test.conf:1:41: Unknown response type: \"bogus\"")]
    [InlineData("exports: [ {service: x, response_type: 1} ]", "test.conf:1:41: Expected response type to be string, got int64")]
    [InlineData("exports: [ {service: x, response_threshold: \"soon\"} ]", "test.conf:1:41: Expected response threshold to be a parseable time duration, got \"soon\"")]
    [InlineData("exports: [ {service: x, latency: {sampling: 500, subject: lat}} ]", "test.conf:1:51: bad sampling percentage, should be 1-100")]
    [InlineData("exports: [ {service: x, latency: {sampling: 50}} ]", "test.conf:1:41: Latency subject required, but missing")]
    [InlineData("exports: [ {service: x, latency: 5} ]", "test.conf:1:41: Expected latency entry to be a map/struct or string, got int64")]
    [InlineData("exports: [ {stream: x, response_type: stream} ]", "test.conf:1:40: Detected response directive on non-service")]
    [InlineData("imports: [ {service: 5} ]", "test.conf:1:29: Service entry should be an account map, got int64")]
    [InlineData("imports: [ {service: {account: B}} ]", "test.conf:1:29: Expect an account name and a subject")]
    public void Service_export_and_import_keys_have_nats_servers_texts(string item, string error) =>
        AssertErrors("accounts { A: { " + item + " } }", error);

    [Fact]
    public void A_services_latency_and_its_keys_are_mapped()
    {
        var mapping = ConfMappingTests.Map("accounts {\n  A: { exports: [ {service: \"svc.>\", accounts: [B], response_type: chunked, response_threshold: \"5s\"}, {service: zero, latency: lat}, {service: one, latency: {sampling: \"25%\", subject: lat.one}}, {service: two, latency: {sampling: headers, subject: lat.two}} ] }\n  B: { imports: [ {service: {account: A, subject: \"svc.>\"}, to: \"my.>\", share: true} ] }\n}");

        Assert.True(mapping.Diagnostics.Count == 0, string.Join("\n", mapping.Diagnostics));
        Assert.Equal("svc.>", mapping.Settings["Broker:Accounts:0:Exports:Services:0:Subject"]);
        Assert.Equal("B", mapping.Settings["Broker:Accounts:0:Exports:Services:0:Accounts:0"]);
        Assert.Equal("Chunked", mapping.Settings["Broker:Accounts:0:Exports:Services:0:ResponseType"]);
        Assert.Equal("00:00:05", mapping.Settings["Broker:Accounts:0:Exports:Services:0:ResponseThreshold"]);
        Assert.False(mapping.Settings.ContainsKey("Broker:Accounts:0:Exports:Services:0:Latency:Subject"));
        Assert.Equal("lat", mapping.Settings["Broker:Accounts:0:Exports:Services:1:Latency:Subject"]);
        Assert.Equal("100", mapping.Settings["Broker:Accounts:0:Exports:Services:1:Latency:Sampling"]);
        Assert.Equal("lat.one", mapping.Settings["Broker:Accounts:0:Exports:Services:2:Latency:Subject"]);
        Assert.Equal("25", mapping.Settings["Broker:Accounts:0:Exports:Services:2:Latency:Sampling"]);
        Assert.Equal("0", mapping.Settings["Broker:Accounts:0:Exports:Services:3:Latency:Sampling"]);
        Assert.Equal("A", mapping.Settings["Broker:Accounts:1:Imports:Services:0:Account"]);
        Assert.Equal("svc.>", mapping.Settings["Broker:Accounts:1:Imports:Services:0:Subject"]);
        Assert.Equal("my.>", mapping.Settings["Broker:Accounts:1:Imports:Services:0:To"]);
        Assert.Equal("true", mapping.Settings["Broker:Accounts:1:Imports:Services:0:Share"]);
    }

    [Fact]
    public void Every_error_is_reported_warnings_first()
    {
        var mapping = ConfMappingTests.Map("port: a\nbogus: 1\nping_interval: 30\ndebug: 2");

        Assert.Equal(
            [
                "test.conf:3:1: invalid use of field \"ping_interval\": ping_interval should be converted to a duration",
                "test.conf:1:1: interface conversion: interface {} is string, not int64",
                "test.conf:2:1: unknown field \"bogus\"",
                "test.conf:4:1: interface conversion: interface {} is int64, not bool",
            ],
            mapping.Diagnostics.Select(d => d.ToString()));
        Assert.Equal("00:00:30", mapping.Settings["Broker:PingInterval"]);
    }

    [Fact]
    public void An_error_in_an_included_file_names_that_file()
    {
        using var directory = new Broker.TestKit.TempDirectory("conf-tests-");
        directory.Write("limits.conf", "max_payload: 1MB\n\nbogus: true\n");
        var main = directory.Write("main.conf", "port: 4222\ninclude limits.conf\n");

        var mapping = ConfMapper.MapFile(main, PluginBlocks.None);

        Assert.Equal($"{Path.Combine(directory.Path, "limits.conf")}:3:1: unknown field \"bogus\"", Assert.Single(mapping.Diagnostics).ToString());
        Assert.Equal("1048576", mapping.Settings["Broker:MaxPayload"]);
    }

    [Fact]
    public void A_syntax_error_is_one_error_at_its_position()
    {
        using var directory = new Broker.TestKit.TempDirectory("conf-tests-");
        var file = directory.Write("broken.conf", "port: 4222\nauthorization {\n  user: a\n");

        var mapping = ConfMapper.MapFile(file, PluginBlocks.None);

        var error = Assert.Single(mapping.Diagnostics);
        Assert.Equal(ConfDiagnosticKind.Error, error.Kind);
        Assert.StartsWith(file + ":", error.ToString(), StringComparison.Ordinal);
        Assert.Empty(mapping.Settings);
    }

    [Fact]
    public void A_missing_file_is_an_error()
    {
        var mapping = ConfMapper.MapFile("/nonexistent/broker.conf", PluginBlocks.None);

        Assert.True(mapping.HasErrors);
        Assert.Contains("/nonexistent/broker.conf", Assert.Single(mapping.Diagnostics).ToString(), StringComparison.Ordinal);
    }

    // A security setting the broker cannot enforce stops it: running without it would admit clients the file keeps out.
    [Theory]
    [InlineData("resolver: URL(\"http://localhost:9090/accounts/\")", "resolver")]
    [InlineData("resolver_tls: { cert_file: c.pem }", "resolver_tls")]
    [InlineData("resolver_pinned_accounts: [AABC]", "resolver_pinned_accounts")]
    [InlineData("ocsp: true", "ocsp")]
    [InlineData("proxies { trusted: [] }", "proxies")]
    [InlineData("default_sentinel: x", "default_sentinel")]
    [InlineData("authorization { users: [ {user: a, allowed_connection_types: [STANDARD]} ] }", "allowed_connection_types")]
    [InlineData("authorization { users: [ {user: a, proxy_required: true} ] }", "proxy_required")]
    [InlineData("accounts { A: { users: [ {user: a, allowed_connection_types: [STANDARD]} ] } }", "allowed_connection_types")]
    public void Security_settings_that_cannot_be_enforced_are_errors(string conf, string key)
    {
        var mapping = ConfMappingTests.Map(conf);

        Assert.True(mapping.HasErrors);
        var error = Assert.Single(mapping.Diagnostics, d => d.Kind == ConfDiagnosticKind.Error);
        Assert.Contains($"\"{key}\": not supported (", error.Message, StringComparison.Ordinal);
        Assert.NotNull(error.Position);
    }

    // Features not there yet: one notice per feature naming every key that asked for it; the file still applies.
    [Theory]
    [InlineData("mqtt { port: 1883 }", "MQTT", "\"mqtt\"")]
    [InlineData("gateway { name: g }", "Gateways", "\"gateway\"")]
    [InlineData("server_tags: [\"a:1\"]", "Server tags", "\"server_tags\"")]
    [InlineData("https: 8443", "HTTPS monitoring", "\"https\"")]
    [InlineData("syslog: true", "Syslog", "\"syslog\"")]
    [InlineData("log_size_limit: 1GB", "Log file rotation", "\"log_size_limit\"")]
    [InlineData("write_timeout: close", "Write timeout policies", "\"write_timeout\"")]
    public void Features_not_there_yet_are_one_notice_each(string conf, string feature, string keys)
    {
        var mapping = ConfMappingTests.Map("port: 4333\n" + conf);

        var notice = Assert.Single(mapping.Diagnostics);
        Assert.Equal(ConfDiagnosticKind.Unsupported, notice.Kind);
        Assert.Equal($"test.conf:2:1: {feature}: not supported yet, ignoring {keys}", notice.ToString());
        Assert.False(mapping.FailsCheck);
        Assert.Equal("4333", Assert.Single(mapping.Settings).Value);
    }

    private static void AssertErrors(string conf, params string[] errors)
    {
        var mapping = ConfMappingTests.Map(conf);

        Assert.True(mapping.HasErrors);
        Assert.Equal(errors, mapping.Diagnostics.Select(d => d.ToString()));
    }
}
