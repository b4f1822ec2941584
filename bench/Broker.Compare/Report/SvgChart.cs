using System.Globalization;
using System.Security;
using System.Text;
using Broker.Compare.Rows;

namespace Broker.Compare.Report;

/// <summary>
/// A horizontal bar chart of ours ÷ nats-server per row, written as plain SVG (no external tools): throughput
/// rows (higher is better) and the connection-scale rows (memory and connect time, lower is better), each bar
/// against a dashed line at 1.0.
/// </summary>
internal static class SvgChart
{
    private const int Width = 820;
    private const int LabelWidth = 360;
    private const int BarArea = 380;
    private const int RowHeight = 24;
    private const int PanelGap = 44;

    public static string Render(CompareReport report)
    {
        ArgumentNullException.ThrowIfNull(report);
        var throughput = report.Rows.Where(r => r.Row.Target == RowTarget.Servers)
            .Select(r => new Bar(r.Row.Title + (r.Errors.Count > 0 ? " *" : string.Empty), r.Ratio, r.Row.IsAvailable ? (r.Ratio is null ? "failed" : null) : "not available"))
            .ToList();
        var scale = report.Scale.SelectMany(s => new[]
        {
            new Bar($"{s.Connections:N0} idle connections: memory", Divide(s.SpreadOf(Side.Ours, m => m.BytesPerConnection)?.Median, s.SpreadOf(Side.NatsServer, m => m.BytesPerConnection)?.Median), null),
            new Bar($"{s.Connections:N0} idle connections: connect time", Divide(s.SpreadOf(Side.Ours, m => m.ConnectTime.TotalMilliseconds)?.Median, s.SpreadOf(Side.NatsServer, m => m.ConnectTime.TotalMilliseconds)?.Median), null),
        }).Select(b => b with { Missing = b.Ratio is null ? "failed" : null }).ToList();

        var all = throughput.Concat(scale).Where(b => b.Ratio is not null).Select(b => b.Ratio!.Value).DefaultIfEmpty(1);
        var maximum = Math.Max(2, Math.Ceiling(all.Max() * 1.1 * 2) / 2);
        var height = 78 + Panel(throughput.Count) + (scale.Count > 0 ? PanelGap + Panel(scale.Count) : 0);

        var svg = new StringBuilder();
        svg.Append(Invariant($"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{height}\" viewBox=\"0 0 {Width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n"));
        svg.Append(Invariant($"<rect width=\"{Width}\" height=\"{height}\" fill=\"white\"/>\n"));
        svg.Append(Invariant($"<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">Our broker ÷ nats-server {Escape(report.NatsServerVersion)}, {report.StartedAt:yyyy-MM-dd} ({report.Machine.Cores} cores, load {Escape(report.LoadBefore)})</text>\n"));
        svg.Append(Invariant($"<text x=\"10\" y=\"42\" fill=\"#555\">Median of {report.Options.Runs} runs per server; green: ours better, orange: nats-server better; * some runs failed (see benchmarks.md)</text>\n"));
        var y = 66;
        y = DrawPanel(svg, y, "Throughput, msgs/s (higher is better)", throughput, maximum);
        if (scale.Count > 0)
        {
            DrawPanel(svg, y + PanelGap - 20, "Connection scale (lower is better)", scale, maximum);
        }

        svg.Append("</svg>\n");
        return svg.ToString();
    }

    private static int Panel(int bars) => 24 + (bars * RowHeight);

    private static int DrawPanel(StringBuilder svg, int top, string title, List<Bar> bars, double maximum)
    {
        svg.Append(Invariant($"<text x=\"10\" y=\"{top + 12}\" font-weight=\"bold\">{Escape(title)}</text>\n"));
        var y = top + 24;
        var one = X(1, maximum);
        foreach (var bar in bars)
        {
            svg.Append(Invariant($"<text x=\"{LabelWidth - 8}\" y=\"{y + 16}\" text-anchor=\"end\">{Escape(bar.Label)}</text>\n"));
            if (bar.Ratio is { } ratio)
            {
                var color = bar.Label.Contains("idle", StringComparison.Ordinal) ? (ratio <= 1 ? "#2e7d32" : "#ef6c00") : (ratio >= 1 ? "#2e7d32" : "#ef6c00");
                var width = Math.Max(1, X(ratio, maximum) - LabelWidth);
                svg.Append(Invariant($"<rect x=\"{LabelWidth}\" y=\"{y + 4}\" width=\"{width:0.#}\" height=\"{RowHeight - 8}\" fill=\"{color}\"/>\n"));
                svg.Append(Invariant($"<text x=\"{LabelWidth + width + 6:0.#}\" y=\"{y + 16}\">{ratio:0.00}</text>\n"));
            }
            else
            {
                svg.Append(Invariant($"<text x=\"{LabelWidth + 6}\" y=\"{y + 16}\" fill=\"#777\">{Escape(bar.Missing ?? "n/a")}</text>\n"));
            }

            y += RowHeight;
        }

        svg.Append(Invariant($"<line x1=\"{one:0.#}\" y1=\"{top + 20}\" x2=\"{one:0.#}\" y2=\"{y}\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>\n"));
        svg.Append(Invariant($"<text x=\"{one:0.#}\" y=\"{y + 14}\" text-anchor=\"middle\" fill=\"#333\">1.0 = same as nats-server</text>\n"));
        return y + 16;
    }

    private static double X(double ratio, double maximum) => LabelWidth + (Math.Min(ratio, maximum) / maximum * BarArea);

    private static double? Divide(double? ours, double? theirs) => ours is { } o && theirs is { } t && t > 0 ? o / t : null;

    private static string Escape(string text) => SecurityElement.Escape(text) ?? string.Empty;

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);

    private sealed record Bar(string Label, double? Ratio, string? Missing);
}
