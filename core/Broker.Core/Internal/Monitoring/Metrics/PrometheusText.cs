using System.Diagnostics.Metrics;
using System.Globalization;
using System.Text;

namespace Broker.Core.Internal.Monitoring.Metrics;

/// <summary>Writes metrics in the Prometheus text exposition format 0.0.4: HELP, TYPE, then one line per label set.</summary>
internal static class PrometheusText
{
    public static byte[] Write(IEnumerable<MetricDefinition> definitions)
    {
        var text = new StringBuilder(4096);
        foreach (var definition in definitions)
        {
            text.Append("# HELP ").Append(definition.Name).Append(' ').Append(EscapeHelp(definition.Help)).Append('\n');
            text.Append("# TYPE ").Append(definition.Name).Append(' ').Append(definition.Type == MetricType.Counter ? "counter" : "gauge").Append('\n');
            foreach (var measurement in definition.Observe())
            {
                text.Append(definition.Name);
                AppendLabels(text, measurement);
                text.Append(' ').Append(FormatValue(measurement.Value)).Append('\n');
            }
        }

        return Encoding.UTF8.GetBytes(text.ToString());
    }

    public static string FormatValue(double value)
    {
        if (double.IsNaN(value))
        {
            return "NaN";
        }

        if (double.IsInfinity(value))
        {
            return value > 0 ? "+Inf" : "-Inf";
        }

        // Whole numbers (the counters) without exponent or fraction; others in round-trip form.
        return Math.Abs(value) < 1e15 && value == Math.Floor(value)
            ? ((long)value).ToString(CultureInfo.InvariantCulture)
            : value.ToString("R", CultureInfo.InvariantCulture);
    }

    private static void AppendLabels(StringBuilder text, Measurement<double> measurement)
    {
        var tags = measurement.Tags;
        if (tags.IsEmpty)
        {
            return;
        }

        text.Append('{');
        for (var i = 0; i < tags.Length; i++)
        {
            if (i > 0)
            {
                text.Append(',');
            }

            var value = Convert.ToString(tags[i].Value, CultureInfo.InvariantCulture) ?? string.Empty;
            text.Append(tags[i].Key).Append("=\"").Append(EscapeLabel(value)).Append('"');
        }

        text.Append('}');
    }

    private static string EscapeLabel(string value) => value.Replace("\\", "\\\\", StringComparison.Ordinal)
        .Replace("\"", "\\\"", StringComparison.Ordinal)
        .Replace("\n", "\\n", StringComparison.Ordinal);

    private static string EscapeHelp(string value) => value.Replace("\\", "\\\\", StringComparison.Ordinal)
        .Replace("\n", "\\n", StringComparison.Ordinal);
}
