using Broker.Host.Configuration.ConfigFile;
using Broker.TestKit;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// The same broken file, checked by the reference nats-server (<c>nats-server -t -c FILE</c>) and mapped by us: the
/// first reported problem is the same text at the same file:line:column. Every file starts with a comment line,
/// because nats-server counts columns from 0 on a file's first line only. Only files with one problem that nats-server
/// finds whatever order it reads keys in (it reads a map's keys in Go's random order: two accounts with the same user,
/// or an authorization token and account users, are reported at either of the two). A quoted key or string is left out:
/// our position is its opening quote, nats-server's the character after it.
/// </summary>
public sealed class ReferenceConfErrorTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-conf-ref-").FullName;

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Theory]
    [InlineData("port: \"abc\"")]
    [InlineData("debug: 1")]
    [InlineData("bogus: 1")]
    [InlineData("listen: true")]
    [InlineData("listen: \"h:x\"")]
    [InlineData("http: \"127.0.0.1\"")]
    [InlineData("max_sub_tokens: 0")]
    [InlineData("max_sub_tokens: 300")]
    [InlineData("max_payload: 3GB")]
    [InlineData("write_deadline: \"abc\"")]
    [InlineData("ping_interval: 30")]
    [InlineData("lame_duck_duration: \"10s\"")]
    [InlineData("lame_duck_grace_period: \"-1s\"")]
    [InlineData("tls: 1")]
    [InlineData("authorization {\n  bogus: 1\n}")]
    [InlineData("authorization { user: a, pass: b, token: c }")]
    [InlineData("authorization {\n  user: a\n  pass: b\n  users: []\n}")]
    [InlineData("authorization {\n  users: [ {user: a}, {user: a} ]\n}")]
    [InlineData("authorization {\n  users: [\n    {user: a, bogus: 1 }\n  ]\n}")]
    [InlineData("authorization {\n  users: [\n    {user: a, permissions: { bogus: 1 } }\n  ]\n}")]
    [InlineData("authorization {\n  users: [\n    {user: a, permissions: { publish: { allow: [\"a..b\"] } } }\n  ]\n}")]
    [InlineData("authorization {\n  users: [\n    {user: a, permissions: { publish: { allow: \"x\", bogus: 1 } } }\n  ]\n}")]
    [InlineData("authorization {\n  users: [\n    {user: a, permissions: { allow_responses: 1 } }\n  ]\n}")]
    [InlineData("authorization {\n  users: [\n    {user: a, permissions: { allow_responses: { expires: 5 } } }\n  ]\n}")]
    [InlineData("accounts {\n  $G: {}\n}")]
    [InlineData("accounts [ A, B, A ]")]
    [InlineData("accounts [ 1 ]")]
    [InlineData("accounts {\n  A: 1\n}")]
    [InlineData("accounts {\n  A: {\n    bogus: 1\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    nkey: AABC\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    nkey: 1\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    limits: 1\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    jetstream: maybe\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    jetstream: 1\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    jetstream: { max_mem: \"x\" }\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    jetstream: { max_bytes_required: 1 }\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    jetstream: { bogus: 1 }\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    limits: { bogus: 1 }\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    limits: { max_conn: \"x\" }\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    default_permissions: 1\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    users: [\n      { nkey: UABC }\n    ]\n  }\n}")]
    [InlineData("accounts {\n  A: {\n    users: [ {user: a}, {user: a} ]\n  }\n}")]
    [InlineData("accounts {\n  A: { exports: [ {stream: \"orders.>\", accounts: [B]} ] }\n  B: { }\n  C: { imports: [ {stream: {account: A, subject: \"orders.>\"}} ] }\n}")]
    [InlineData("accounts {\n  A: { exports: [ {stream: \"orders.>\", accounts: [X]} ] }\n}")]
    [InlineData("accounts {\n  B: { imports: [ {stream: {account: X, subject: \"orders.>\"}} ] }\n}")]
    // Not compared: an import with both `prefix` and `to`, which nats-server refuses or accepts by Go's random key order.
    [InlineData("accounts {\n  A: { exports: [ {stream: \"o.>\"} ] }\n  B: { imports: [ {stream: {account: A, subject: \"o.>\"}, prefix: \"p.*\"} ] }\n}")]
    [InlineData("accounts {\n  A: { exports: [ {stream: \"x.>\"} ], imports: [ {stream: {account: B, subject: \"x.>\"}} ] }\n  B: { exports: [ {stream: \"x.>\"} ], imports: [ {stream: {account: A, subject: \"x.>\"}} ] }\n}")]
    [InlineData("accounts {\n  A: { exports: [ {stream: \"x.>\"} ] }\n  B: { imports: [ {stream: {account: A, subject: \"x.>\"}, bogus: 1} ] }\n}")]
    [InlineData("accounts {\n  A: { exports: [ {stream: \"x.>\", bogus: 1} ] }\n}")]
    [InlineData("accounts {\n  A: { exports: [ 1 ] }\n}")]
    [InlineData("accounts {\n  A: { exports: 1 }\n}")]
    [InlineData("accounts {\n  A: { imports: 1 }\n}")]
    [InlineData("accounts {\n  A: { imports: [ 1 ] }\n}")]
    [InlineData("accounts {\n  A: { exports: [ {stream: 1} ] }\n}")]
    [InlineData("accounts {\n  A: { exports: [ {stream: x, response_type: singleton} ] }\n}")]
    [InlineData("accounts {\n  A: { imports: [ {stream: 1} ] }\n}")]
    [InlineData("accounts {\n  A: { imports: [ {stream: {account: A}} ] }\n}")]
    [InlineData("accounts {\n  A: { imports: [ {stream: {account: A, subject: x, bogus: 1}} ] }\n}")]
    [InlineData("cluster: 1")]
    [InlineData("cluster {\n  bogus: 1\n}")]
    [InlineData("cluster {\n  listen: \"127.0.0.1:x\"\n}")]
    [InlineData("cluster {\n  port: \"abc\"\n}")]
    [InlineData("cluster {\n  routes: \"nats://a:1\"\n}")]
    [InlineData("cluster {\n  no_advertise: 5\n}")]
    [InlineData("cluster {\n  connect_retries: \"x\"\n}")]
    [InlineData("cluster {\n  authorization { user: a, password: b, token: c }\n}")]
    [InlineData("cluster {\n  authorization { users: [ {user: a} ] }\n}")]
    [InlineData("leafnodes: 1")]
    [InlineData("leafnodes {\n  bogus: 1\n}")]
    [InlineData("leafnodes {\n  reconnect: \"x\"\n}")]
    [InlineData("leafnodes {\n  remotes: 1\n}")]
    [InlineData("leafnodes {\n  remotes: [ 1 ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: 1 }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://h:x\" }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", bogus: 1 }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", account: 1 }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", no_randomize: 1 }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", deny_imports: [\"a..b\"] }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", deny_exports: 1 }\n  ]\n}")]
    [InlineData("leafnodes {\n  listen: \"h:x\"\n}")]
    [InlineData("leafnodes {\n  listen: \"nocolon\"\n}")]
    [InlineData("leafnodes {\n  listen: true\n}")]
    [InlineData("leafnodes {\n  port: \"x\"\n}")]
    [InlineData("leafnodes {\n  no_advertise: 1\n}")]
    [InlineData("leafnodes {\n  authorization: 1\n}")]
    [InlineData("leafnodes {\n  authorization { bogus: 1 }\n}")]
    [InlineData("leafnodes {\n  authorization { token: t }\n}")]
    [InlineData("leafnodes {\n  authorization { user: 1 }\n}")]
    [InlineData("leafnodes {\n  authorization { users: 1 }\n}")]
    [InlineData("leafnodes {\n  authorization { users: [ 1 ] }\n}")]
    [InlineData("leafnodes {\n  authorization { users: [ { user: a, bogus: 1 } ] }\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", tls: { bogus: 1 } }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", tls: { insecure: 1 } }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", tls: { ca_file: 1 } }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", tls: { timeout: true } }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", tls: { timeout: \"x\" } }\n  ]\n}")]
    [InlineData("leafnodes {\n  remotes: [\n    { url: \"nats://a:1\", tls: 1 }\n  ]\n}")]
    public async Task First_problem_matches_nats_server(string body)
    {
        var file = Path.Combine(directory, "check.conf");
        await File.WriteAllTextAsync(file, "# checked by both servers\n" + body + "\n");

        var reference = await CheckWithReferenceAsync(file);
        var ours = ConfMapper.MapFile(file, PluginBlocks.None).Diagnostics[0].ToString();

        Assert.Equal(reference, ours);
    }

    // nats-server -t prints "nats-server: <problems, one per line>" on standard error and exits 1.
    private static async Task<string> CheckWithReferenceAsync(string file)
    {
        var binary = ReferenceServer.BinaryPath ?? throw new InvalidOperationException("nats-server (the Go reference) is not installed; ./scripts/test.sh installs it.");
        var result = await ExternalProcess.RunAsync(binary, ["-t", "-c", file], TimeSpan.FromSeconds(20));
        Assert.True(result.ExitCode == 1, result.ToString());
        const string prefix = "nats-server: ";
        var first = result.ErrorText.Split('\n')[0].TrimEnd('\r');
        Assert.StartsWith(prefix, first, StringComparison.Ordinal);
        return first[prefix.Length..];
    }
}
