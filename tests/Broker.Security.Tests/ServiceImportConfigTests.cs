using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;
using static Broker.Security.Tests.AccountOptionsMerge;

namespace Broker.Security.Tests;

/// <summary>
/// Service exports and imports refused at load, the same on both servers: our options' validation throws the text
/// <c>nats-server -t</c> prints for the same accounts (at the <c>accounts</c> key); a chain loads on both. Also the
/// reload of service imports, ours only.
/// </summary>
public sealed class ServiceImportConfigTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-services-").FullName;

    public void Dispose() => Directory.Delete(directory, recursive: true);

    public static TheoryData<string> Refused => new()
    {
        "not-authorized",
        "not-approved",
        "undefined-exporter",
        "undefined-approved-account",
        "service-cycle",
        "invalid-subject",
        "latency-not-singleton",
        "latency-results-in-the-service",
    };

    private static (AccountOptions[] Options, string Conf) Case(string name) => name switch
    {
        "not-authorized" => (
            [new AccountOptions { Name = "A" }, Import("B", "A", "x")],
            """
            A: { }
            B: { imports: [ {service: {account: A, subject: "x"}} ] }
            """),
        "not-approved" => (
            [Export("A", "x.>", "B"), Import("B", "A", "x.>"), Import("C", "A", "x.y")],
            """
            A: { exports: [ {service: "x.>", accounts: [B]} ] }
            B: { imports: [ {service: {account: A, subject: "x.>"}} ] }
            C: { imports: [ {service: {account: A, subject: "x.y"}} ] }
            """),
        "undefined-exporter" => (
            [Import("B", "Z", "x")],
            """B: { imports: [ {service: {account: Z, subject: "x"}} ] }"""),
        "undefined-approved-account" => (
            [Export("A", "x", "Z")],
            """A: { exports: [ {service: "x", accounts: [Z]} ] }"""),
        "service-cycle" => (
            [With(Export("A", "x"), Import("A", "B", "x")), With(Export("B", "x"), Import("B", "A", "x"))],
            """
            A: { exports: [ {service: "x"} ], imports: [ {service: {account: B, subject: "x"}} ] }
            B: { exports: [ {service: "x"} ], imports: [ {service: {account: A, subject: "x"}} ] }
            """),
        "invalid-subject" => (
            [Export("A", "x.>"), Import("B", "A", "x.>", to: "y..z")],
            """
            A: { exports: [ {service: "x.>"} ] }
            B: { imports: [ {service: {account: A, subject: "x.>"}, to: "y..z"} ] }
            """),
        "latency-not-singleton" => (
            [Tracked(Export("A", "x"), "lat", ServiceResponseType.Streamed)],
            """A: { exports: [ {service: "x", response_type: stream, latency: lat} ] }"""),
        "latency-results-in-the-service" => (
            [Tracked(Export("A", "x.>"), "x.lat", ServiceResponseType.Singleton)],
            """A: { exports: [ {service: "x.>", latency: {sampling: 50, subject: "x.lat"}} ] }"""),
        _ => throw new ArgumentOutOfRangeException(nameof(name)),
    };

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Refused))]
    public async Task Refused_service_imports_have_nats_servers_text(string name)
    {
        var (accounts, conf) = Case(name);
        var result = await CheckAsync(conf);
        Assert.True(result.ExitCode == 1, result.ToString());
        var first = result.ErrorText.Split('\n')[0].TrimEnd('\r');
        const string at = "c.conf:2:1: ";
        var position = first.IndexOf(at, StringComparison.Ordinal);
        Assert.True(position > 0, first);

        var options = new BrokerOptions { Accounts = Merge(accounts) };
        var error = Assert.Throws<InvalidOperationException>(options.Validate);
        Assert.Equal(first[(position + at.Length)..], error.Message);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_chain_and_mapped_wildcards_load_on_both()
    {
        const string conf = """
            A: { exports: [ {service: "svc.>", response_type: chunked, response_threshold: "5s"}, {service: "m.*.*"} ] }
            B: { exports: [ {service: "svc.>"} ], imports: [ {service: {account: A, subject: "svc.>"}}, {service: {account: A, subject: "m.*.*"}, to: "local.*.*"} ] }
            C: { imports: [ {service: {account: B, subject: "svc.>"}, share: true} ] }
            """;
        var result = await CheckAsync(conf);
        Assert.True(result.ExitCode == 0, result.ToString());

        var a = Export("A", "svc.>");
        a.Exports.Services[0].ResponseType = ServiceResponseType.Chunked;
        a.Exports.Services[0].ResponseThreshold = TimeSpan.FromSeconds(5);
        a.Exports.Services.Add(new ServiceExportOptions { Subject = "m.*.*" });
        var b = With(With(Export("B", "svc.>"), Import("B", "A", "svc.>")), Import("B", "A", "m.*.*", to: "local.*.*"));
        var c = Import("C", "B", "svc.>");
        c.Imports.Services[0].Share = true;
        new BrokerOptions { Accounts = [a, b, c] }.Validate();
    }

    [Fact(Timeout = 30_000)]
    public async Task Reload_adds_and_removes_a_service_import()
    {
        static List<AccountOptions> Options(bool imported)
        {
            var a = Export("A", "svc.>");
            a.Users = [AccountIsolationTests.User("a")];
            var b = imported ? Import("B", "A", "svc.>") : new AccountOptions { Name = "B" };
            b.Users = [AccountIsolationTests.User("b")];
            return [a, b];
        }

        await using var broker = await TestBroker.StartAsync(o => o.Accounts = Options(imported: false));
        await using var requester = await RawClientFor(broker, "b");
        await using var responder = await RawClientFor(broker, "a");
        await responder.SendAsync("SUB svc.> 1\r\n");
        Assert.Equal(["PONG"], (await responder.PingAndCollectAsync()).Lines);

        async Task<IReadOnlyList<string>> RequestAsync(string subject)
        {
            await requester.SendAsync($"PUB {subject} 2\r\nhi\r\n");
            Assert.Equal(["PONG"], (await requester.PingAndCollectAsync()).Lines);
            return (await responder.PingAndCollectAsync()).Lines;
        }

        Assert.Equal(["PONG"], await RequestAsync("svc.1"));
        Assert.True((await broker.Server.ReloadAsync(new BrokerOptions { Host = "127.0.0.1", Port = 0, Accounts = Options(imported: true) })).Succeeded);
        Assert.Equal(["MSG svc.2 1 2", "hi", "PONG"], await RequestAsync("svc.2"));
        Assert.True((await broker.Server.ReloadAsync(new BrokerOptions { Host = "127.0.0.1", Port = 0, Accounts = Options(imported: false) })).Succeeded);
        Assert.Equal(["PONG"], await RequestAsync("svc.3"));
    }

    private async Task<ProcessResult> CheckAsync(string conf)
    {
        var file = Path.Combine(directory, "c.conf");
        await File.WriteAllTextAsync(file, "# services\naccounts {\n" + conf + "\n}\n");
        var binary = ReferenceServer.BinaryPath ?? throw new InvalidOperationException("nats-server (the Go reference) is not installed; ./scripts/test.sh installs it.");
        return await ExternalProcess.RunAsync(binary, ["-t", "-c", file], TimeSpan.FromSeconds(20));
    }

    private static async Task<RawClient> RawClientFor(TestBroker broker, string user)
    {
        var client = await RawClient.ConnectAsync(broker.EndPoint);
        await client.SendAsync($"CONNECT {{\"user\":\"{user}\",\"pass\":\"{user}\",\"verbose\":false}}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        return client;
    }

    private static AccountOptions Export(string account, string subject, params string[] to) => new()
    {
        Name = account,
        Exports = new AccountExportOptions { Services = [new ServiceExportOptions { Subject = subject, Accounts = to.Length == 0 ? null : [.. to] }] },
    };

    private static AccountOptions Tracked(AccountOptions exporter, string results, ServiceResponseType type)
    {
        exporter.Exports.Services[0].ResponseType = type;
        exporter.Exports.Services[0].Latency = new ServiceLatencyOptions { Subject = results, Sampling = 50 };
        return exporter;
    }

    private static AccountOptions Import(string account, string from, string subject, string? to = null) => new()
    {
        Name = account,
        Imports = new AccountImportOptions { Services = [new ServiceImportOptions { Account = from, Subject = subject, To = to }] },
    };
}
