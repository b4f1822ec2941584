using Broker.Compare;
using Broker.Compare.Report;
using Broker.Compare.Rows;
using Xunit.Abstractions;

namespace Broker.Bench.Tests.Compare;

/// <summary>
/// The comparison harness in <c>--smoke</c> mode (tiny counts, one run, every row, both servers), so it cannot rot
/// between benchmark sessions. Only completeness is asserted: no timing, anywhere.
/// </summary>
public sealed class CompareSmokeTests(ITestOutputHelper output)
{
    [Fact(Timeout = 300_000)]
    public async Task Smoke_run_produces_a_result_for_every_row_on_both_servers()
    {
        var directory = Directory.CreateTempSubdirectory("broker-compare-smoke-");
        try
        {
            using var log = new StringWriter();
            using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(4));
            var options = CompareOptions.Parse(["--smoke", "--out", directory.FullName]);

            CompareReport? report = null;
            var exitCode = await Task.Run(() => Program.Run(options, log, timeout.Token, out report));
            output.WriteLine(log.ToString());

            Assert.NotNull(report);
            Assert.Equal(RowCatalog.All.Select(r => r.Id), report.Rows.Select(r => r.Row.Id));
            Assert.All(report.Rows.Where(r => r.Row.IsAvailable), r => Assert.True(r.Succeeded, $"{r.Row.Id}: {string.Join("; ", r.Errors.SelectMany(e => e.Value))}"));
            Assert.All(report.Rows.Where(r => r.Row.IsAvailable && r.Row.Target == RowTarget.Servers && r.NotSupported.Count == 0), r => Assert.NotNull(r.Ratio));
            Assert.All(report.Rows.Where(r => r.Row.Workload is { } w && w().HasLatency && r.NotSupported.Count == 0), r => Assert.NotNull(r.RunsOf(Side.Ours)[0].Latency));

            // Only the service-import row may find ours without its feature (service imports, issue 20), and then it
            // still ran on nats-server; once the feature lands it runs on both like every other row.
            Assert.All(report.Rows.Where(r => r.NotSupported.Count > 0), r => Assert.Equal(("svcimport-reqrep-128", Side.Ours), (r.Row.Id, r.NotSupported.Keys.Single())));
            Assert.All(report.Rows.Where(r => r.NotSupported.Count > 0), r => Assert.NotEmpty(r.RunsOf(Side.NatsServer)));
            Assert.Equal([20, 200], report.Scale.Select(s => s.Connections));
            Assert.All(report.Scale, s => Assert.True(s.Succeeded, $"scale {s.Connections}: {string.Join("; ", s.Errors.SelectMany(e => e.Value))}"));
            Assert.Equal(0, exitCode);

            var markdown = await File.ReadAllTextAsync(Path.Combine(directory.FullName, ReportWriter.MarkdownFileName));
            Assert.All(RowCatalog.All, row => Assert.Contains(row.Title, markdown, StringComparison.Ordinal));
            Assert.Contains("not available", markdown, StringComparison.Ordinal);
            var svg = await File.ReadAllTextAsync(Path.Combine(directory.FullName, ReportWriter.ChartFileName));
            Assert.StartsWith("<svg", svg, StringComparison.Ordinal);
            Assert.EndsWith("</svg>\n", svg, StringComparison.Ordinal);
        }
        finally
        {
            directory.Delete(recursive: true);
        }
    }

    [Fact(Timeout = 240_000)]
    public async Task Accounts_option_runs_rows_with_an_idle_account_beside_theirs_on_both_servers()
    {
        using var log = new StringWriter();
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(3));
        var options = CompareOptions.Parse(["--smoke", "--accounts", "2", "--client", "lean", "--no-scale", "--rows", "pubsub-16,reqrep-1-128,streamimport,js-pub-sync-16,tls-pubsub-128"]);

        CompareReport? report = null;
        var exitCode = await Task.Run(() => Program.Run(options, log, timeout.Token, out report));
        output.WriteLine(log.ToString());

        Assert.NotNull(report);
        Assert.Equal(["pubsub-16", "pubsub-16k", "reqrep-1-128", "streamimport-pubsub-128", "js-pub-sync-16", "tls-pubsub-128"], report.Rows.Select(r => r.Row.Id));
        Assert.All(report.Rows, r => Assert.True(r.Succeeded && r.Ratio is not null, $"{r.Row.Id}: {string.Join("; ", r.Errors.SelectMany(e => e.Value))}"));
        Assert.Equal(0, exitCode);
    }

    [Theory(Timeout = 240_000)]
    [InlineData("leaf", new[] { "leaf-spoke2hub-128", "leaf-spoke2hub-128.core", "leaf-spoke2hub-128.c", "leaf-hub2spoke-128", "leaf-hub2spoke-128.core", "leaf-hub2spoke-128.c" })]
    [InlineData("route", new[] { "route-pubsub-128", "route-pubsub-128.core", "route-pubsub-128.c" })]
    public async Task Linked_rows_run_across_two_servers_of_each_kind_with_every_generator(string rows, string[] expected)
    {
        using var log = new StringWriter();
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(3));
        var options = CompareOptions.Parse(["--smoke", "--no-scale", "--rows", rows]);

        CompareReport? report = null;
        var exitCode = await Task.Run(() => Program.Run(options, log, timeout.Token, out report));
        output.WriteLine(log.ToString());

        Assert.NotNull(report);
        Assert.Equal(expected, report.Rows.Select(r => r.Row.Id));
        Assert.All(report.Rows, r => Assert.True(r.Succeeded && r.Ratio is not null, $"{r.Row.Id}: {string.Join("; ", r.Errors.SelectMany(e => e.Value))}"));
        Assert.All(report.Rows, r => Assert.NotEqual(ServerLink.None, r.Row.Link));
        Assert.NotEmpty(report.OursVersion);
        Assert.Equal(0, exitCode);
    }

    [Fact]
    public void Accounts_configuration_adds_idle_accounts_beside_the_rows_own()
    {
        Assert.Null(AccountsConfig.Apply(null, 0));
        Assert.Equal("tls {}\n", AccountsConfig.Apply("tls {}\n", 0));
        Assert.Equal(
            "accounts {\n  BENCH: { users: [ { user: bench, password: bench } ] }\n  IDLE1: { users: [ { user: idle1, password: idle1 } ] }\n  IDLE2: { users: [ { user: idle2, password: idle2 } ] }\n}\nno_auth_user: bench\n",
            AccountsConfig.Apply(null, 3));
        Assert.Equal(
            "jetstream {\n}\naccounts {\n  BENCH: { users: [ { user: bench, password: bench } ], jetstream: enabled }\n}\nno_auth_user: bench\n",
            AccountsConfig.Apply("jetstream {\n}", 1));
        Assert.Equal(
            "accounts {\n  IDLE1: { users: [ { user: idle1, password: idle1 } ] }\n  E: {}\n}\nno_auth_user: e\n",
            AccountsConfig.Apply("accounts {\n  E: {}\n}\nno_auth_user: e\n", 2));
    }

    [Fact]
    public void Command_line_is_parsed_and_smoke_shrinks_the_counts()
    {
        var smoke = CompareOptions.Parse(["--smoke"]);
        var full = CompareOptions.Parse(["--runs", "7", "--rows", "pub,reqrep", "--scale", "100", "--no-write"]);

        Assert.Equal((1, 1, false), (smoke.Runs, smoke.ScaleRuns, smoke.Write));
        Assert.Equal([20, 200], smoke.ScaleCounts);
        Assert.Equal(7, full.Runs);
        Assert.Equal(["pub", "reqrep"], full.RowFilter);
        Assert.Equal([100], full.ScaleCounts);
        Assert.False(full.Write);
        Assert.Equal("dotnet run -c Release --project bench/Broker.Compare -- --smoke", smoke.Command);
        Assert.Equal(0, full.Accounts);
        Assert.Equal(2, CompareOptions.Parse(["--accounts", "2"]).Accounts);
        Assert.Throws<ArgumentException>(() => CompareOptions.Parse(["--accounts", "0"]));
        Assert.Throws<ArgumentException>(() => CompareOptions.Parse(["--runs", "0"]));
        Assert.Throws<ArgumentException>(() => CompareOptions.Parse(["--bogus"]));
    }
}
