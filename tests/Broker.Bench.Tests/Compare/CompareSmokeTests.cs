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
            Assert.All(report.Rows.Where(r => r.Row.IsAvailable && r.Row.Target == RowTarget.Servers), r => Assert.NotNull(r.Ratio));
            Assert.All(report.Rows.Where(r => r.Row.Workload is { } w && w().HasLatency), r => Assert.NotNull(r.RunsOf(Side.Ours)[0].Latency));
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
        Assert.Throws<ArgumentException>(() => CompareOptions.Parse(["--runs", "0"]));
        Assert.Throws<ArgumentException>(() => CompareOptions.Parse(["--bogus"]));
    }
}
