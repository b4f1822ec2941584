using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;
using static Broker.Security.Tests.AccountOptionsMerge;

namespace Broker.Security.Tests;

/// <summary>
/// Exports and imports refused at load, the same on both servers: our options' validation throws nats-server's text,
/// which <c>nats-server -t</c> prints for the same accounts (at the <c>accounts</c> key). Also the reload of imports,
/// ours only (nats-server takes import changes on reload too, which a raw-socket test cannot drive there).
/// </summary>
public sealed class AccountImportConfigTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-imports-").FullName;

    public void Dispose() => Directory.Delete(directory, recursive: true);

    public static TheoryData<string> Refused => new()
    {
        "not-authorized",
        "undefined-importer-source",
        "undefined-export-account",
        "wildcard-prefix",
        "stream-cycle",
        "duplicate",
        "no-export",
    };

    // Each case as our options and as nats-server's accounts block.
    private static (AccountOptions[] Options, string Conf) Case(string name) => name switch
    {
        "not-authorized" => (
            [Export("A", "orders.>", "B"), Import("B", "A", "orders.>"), Import("C", "A", "orders.*")],
            """
            A: { exports: [ {stream: "orders.>", accounts: [B]} ] }
            B: { imports: [ {stream: {account: A, subject: "orders.>"}} ] }
            C: { imports: [ {stream: {account: A, subject: "orders.*"}} ] }
            """),
        "undefined-importer-source" => (
            [Import("B", "X", "orders.>")],
            """B: { imports: [ {stream: {account: X, subject: "orders.>"}} ] }"""),
        "undefined-export-account" => (
            [Export("A", "orders.>", "X")],
            """A: { exports: [ {stream: "orders.>", accounts: [X]} ] }"""),
        "wildcard-prefix" => (
            [Export("A", "orders.>"), Import("B", "A", "orders.>", prefix: "p.*")],
            """
            A: { exports: [ {stream: "orders.>"} ] }
            B: { imports: [ {stream: {account: A, subject: "orders.>"}, prefix: "p.*"} ] }
            """),
        "stream-cycle" => (
            [With(Export("A", "x.>"), Import("A", "B", "x.>")), With(Export("B", "x.>"), Import("B", "A", "x.>"))],
            """
            A: { exports: [ {stream: "x.>"} ], imports: [ {stream: {account: B, subject: "x.>"}} ] }
            B: { exports: [ {stream: "x.>"} ], imports: [ {stream: {account: A, subject: "x.>"}} ] }
            """),
        "duplicate" => (
            [Export("A", "x.>"), With(Import("B", "A", "x.>"), Import("B", "A", "x.>"))],
            """
            A: { exports: [ {stream: "x.>"} ] }
            B: { imports: [ {stream: {account: A, subject: "x.>"}}, {stream: {account: A, subject: "x.>"}} ] }
            """),
        "no-export" => (
            [new AccountOptions { Name = "A" }, Import("B", "A", "x.>")],
            """
            A: { }
            B: { imports: [ {stream: {account: A, subject: "x.>"}} ] }
            """),
        _ => throw new ArgumentOutOfRangeException(nameof(name)),
    };

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Refused))]
    public async Task Refused_imports_have_nats_servers_text(string name)
    {
        var (accounts, conf) = Case(name);
        var file = Path.Combine(directory, "c.conf");
        await File.WriteAllTextAsync(file, "# imports\naccounts {\n" + conf + "\n}\n");
        var binary = ReferenceServer.BinaryPath ?? throw new InvalidOperationException("nats-server (the Go reference) is not installed; ./scripts/test.sh installs it.");
        var result = await ExternalProcess.RunAsync(binary, ["-t", "-c", file], TimeSpan.FromSeconds(20));
        Assert.True(result.ExitCode == 1, result.ToString());
        var first = result.ErrorText.Split('\n')[0].TrimEnd('\r');
        const string at = "c.conf:2:1: ";
        var position = first.IndexOf(at, StringComparison.Ordinal);
        Assert.True(position > 0, first);

        var options = new BrokerOptions { Accounts = Merge(accounts) };
        var error = Assert.Throws<InvalidOperationException>(options.Validate);
        Assert.Equal(first[(position + at.Length)..], error.Message);
    }

    [Fact]
    public void Prefix_and_to_together_are_refused()
    {
        var options = new BrokerOptions { Accounts = [Export("A", "x.>"), Import("B", "A", "x.>", prefix: "p", to: "q.>")] };
        var error = Assert.Throws<InvalidOperationException>(options.Validate);
        Assert.Equal("Stream import can not have a 'prefix' and a 'to' property", error.Message);
    }

    [Fact(Timeout = 30_000)]
    public async Task Reload_adds_and_removes_an_import_for_live_subscriptions()
    {
        static BrokerOptions Options(bool imported)
        {
            var a = Export("A", "orders.>");
            a.Users = [AccountIsolationTests.User("a")];
            var b = imported ? Import("B", "A", "orders.>", prefix: "p") : new AccountOptions { Name = "B" };
            b.Users = [AccountIsolationTests.User("b")];
            return new BrokerOptions { Host = "127.0.0.1", Port = 0, Accounts = [a, b] };
        }

        await using var broker = await TestBroker.StartAsync(o => o.Accounts = Options(imported: false).Accounts);
        await using var importer = await RawClientFor(broker, "b");
        await using var exporter = await RawClientFor(broker, "a");
        await importer.SendAsync("SUB p.> 1\r\n");
        Assert.Equal(["PONG"], (await importer.PingAndCollectAsync()).Lines);

        async Task<IReadOnlyList<string>> PublishAsync(string subject)
        {
            await exporter.SendAsync($"PUB {subject} 2\r\nhi\r\n");
            Assert.Equal(["PONG"], (await exporter.PingAndCollectAsync()).Lines);
            return (await importer.PingAndCollectAsync()).Lines;
        }

        Assert.Equal(["PONG"], await PublishAsync("orders.1"));
        Assert.True((await broker.Server.ReloadAsync(Options(imported: true))).Succeeded);
        Assert.Equal(["MSG p.orders.2 1 2", "hi", "PONG"], await PublishAsync("orders.2"));
        Assert.True((await broker.Server.ReloadAsync(Options(imported: false))).Succeeded);
        Assert.Equal(["PONG"], await PublishAsync("orders.3"));
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
        Exports = new AccountExportOptions { Streams = [new StreamExportOptions { Subject = subject, Accounts = to.Length == 0 ? null : [.. to] }] },
    };

    private static AccountOptions Import(string account, string from, string subject, string? prefix = null, string? to = null) => new()
    {
        Name = account,
        Imports = new AccountImportOptions { Streams = [new StreamImportOptions { Account = from, Subject = subject, Prefix = prefix, To = to }] },
    };
}
