using System.Globalization;

namespace Broker.JetStream.Internal.Json;

/// <summary>Go's <c>time.ParseDuration</c>: a sequence of decimal numbers with units (ns, us, µs, ms, s, m, h), e.g. <c>1m30s</c>.</summary>
internal static class GoDuration
{
    /// <summary>Nanoseconds as Go prints a duration in the texts clients match (<c>2m0s</c>, <c>1.5s</c>, <c>100ms</c>).</summary>
    public static string Format(long nanoseconds) => TimeSpan.FromTicks(nanoseconds / 100) switch
    {
        var span when span.TotalHours >= 1 => $"{(int)span.TotalHours}h{span.Minutes}m{span.Seconds}s",
        var span when span.TotalMinutes >= 1 => $"{span.Minutes}m{span.Seconds}s",
        var span when span.TotalSeconds >= 1 => span.TotalSeconds.ToString("0.###", CultureInfo.InvariantCulture) + "s",
        var span => span.TotalMilliseconds.ToString("0.###", CultureInfo.InvariantCulture) + "ms",
    };

    /// <summary>Parses to nanoseconds; false when malformed or negative.</summary>
    public static bool TryParse(string text, out long nanoseconds)
    {
        nanoseconds = 0;
        if (text == "0")
        {
            return true;
        }

        var i = 0;
        double total = 0;
        if (text.Length == 0)
        {
            return false;
        }

        while (i < text.Length)
        {
            var start = i;
            while (i < text.Length && (char.IsAsciiDigit(text[i]) || text[i] == '.'))
            {
                i++;
            }

            if (start == i || !double.TryParse(text.AsSpan(start, i - start), NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var value))
            {
                return false;
            }

            var unitStart = i;
            while (i < text.Length && !char.IsAsciiDigit(text[i]) && text[i] != '.')
            {
                i++;
            }

            double scale = text[unitStart..i] switch
            {
                "ns" => 1,
                "us" or "µs" or "μs" => 1e3,
                "ms" => 1e6,
                "s" => 1e9,
                "m" => 60e9,
                "h" => 3600e9,
                _ => -1,
            };
            if (scale < 0)
            {
                return false;
            }

            total += value * scale;
        }

        nanoseconds = (long)total;
        return true;
    }
}
