using Broker.Compare.Report;

namespace Broker.Bench.Tests.Compare;

public sealed class ReportWriterTests
{
    [Fact]
    public void Replaces_only_the_generated_region()
    {
        var document = "# Benchmarks\n\nMethod written by people.\n\n" + ReportWriter.BeginMarker + "\nold table\n" + ReportWriter.EndMarker + "\n\n## Optimisation history\n";

        var updated = ReportWriter.ReplaceRegion(document, "new table\n");

        Assert.Equal("# Benchmarks\n\nMethod written by people.\n\n" + ReportWriter.BeginMarker + "\nnew table\n" + ReportWriter.EndMarker + "\n\n## Optimisation history\n", updated);
    }

    [Fact]
    public void Appends_the_region_to_a_document_without_markers()
    {
        var updated = ReportWriter.ReplaceRegion("# Benchmarks\n", "table\n");

        Assert.Equal("# Benchmarks\n\n" + ReportWriter.BeginMarker + "\ntable\n" + ReportWriter.EndMarker + "\n", updated);
    }

    [Fact]
    public void Short_numbers_keep_three_significant_digits()
    {
        Assert.Equal("1.23 M", MarkdownReport.Short(1_234_567));
        Assert.Equal("45.7 k", MarkdownReport.Short(45_678));
        Assert.Equal("789", MarkdownReport.Short(789.4));
        Assert.Equal("1.5", MarkdownReport.Short(1.5));
    }
}
