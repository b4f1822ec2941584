using System.Globalization;

namespace Broker.JetStream.Internal.Json;

/// <summary>Go's <c>time.ParseDuration</c>: a sequence of decimal numbers with units (ns, us, µs, ms, s, m, h), e.g. <c>1m30s</c>.</summary>
internal static class GoDuration
{
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
