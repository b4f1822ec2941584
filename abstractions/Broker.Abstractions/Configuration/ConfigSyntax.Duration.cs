using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Text;

namespace Broker.Abstractions;

// Go's time.ParseDuration, which nats-server applies to duration options written as strings ("2m", "500ms", "1h30m",
// "1.5s", "-3s"): a sequence of decimal numbers, each with an optional fraction and a unit (ns, us or µs or μs, ms, s,
// m, h), an optional sign before all; a lone 0 needs no unit. Go durations are nanoseconds in an int64 (about ±292
// years); TimeSpan keeps 100 ns ticks, so values are truncated below that. Error messages are Go's.
public static partial class ConfigSyntax
{
    private const ulong MaxMagnitude = 1UL << 63; // |long.MinValue|

    /// <summary>
    /// Parses a Go duration (<c>time.ParseDuration</c>): <c>"1m30s"</c>, <c>"500ms"</c>, <c>"2us"</c>, <c>"1.5h"</c>,
    /// <c>"-3s"</c>, <c>"0"</c>. Units are <c>ns</c>, <c>us</c> (<c>µs</c>), <c>ms</c>, <c>s</c>, <c>m</c> and
    /// <c>h</c>; the result is truncated to whole 100 ns ticks.
    /// </summary>
    /// <param name="text">The text.</param>
    /// <param name="value">The duration.</param>
    /// <param name="error">Go's message when the text is not a duration, such as <c>time: invalid duration "x"</c>.</param>
    /// <returns><see langword="true"/> when the text is a Go duration.</returns>
    public static bool TryParseDuration(string text, out TimeSpan value, [NotNullWhen(false)] out string? error)
    {
        if (TryParseNanoseconds(text, out var nanoseconds, out error))
        {
            value = TimeSpan.FromTicks(nanoseconds / TimeSpan.NanosecondsPerTick);
            return true;
        }

        value = default;
        return false;
    }

    /// <summary>
    /// Parses a Go duration (<c>time.ParseDuration</c>) to nanoseconds exactly, with Go's arithmetic: what
    /// <see cref="TryParseDuration"/> reads, without truncating to ticks. JetStream's API takes durations this way
    /// (a NAK delay of <c>"1.5s"</c>).
    /// </summary>
    /// <param name="text">The text.</param>
    /// <param name="nanoseconds">The duration in nanoseconds; negative when the text has a minus sign.</param>
    /// <param name="error">Go's message when the text is not a duration.</param>
    /// <returns><see langword="true"/> when the text is a Go duration.</returns>
    public static bool TryParseNanoseconds(string text, out long nanoseconds, [NotNullWhen(false)] out string? error)
    {
        ArgumentNullException.ThrowIfNull(text);
        nanoseconds = 0;
        var quoted = Quote(text);
        var invalid = $"time: invalid duration {quoted}";
        var s = text.AsSpan();
        var negative = false;
        if (!s.IsEmpty && s[0] is '-' or '+')
        {
            negative = s[0] == '-';
            s = s[1..];
        }
        if (s is "0")
        {
            error = null;
            return true;
        }
        if (s.IsEmpty)
        {
            error = invalid;
            return false;
        }

        ulong total = 0;
        while (!s.IsEmpty)
        {
            if (!(s[0] == '.' || char.IsAsciiDigit(s[0])))
            {
                error = invalid;
                return false;
            }
            var before = s.Length;
            if (!TryLeadingInt(ref s, out var whole))
            {
                error = invalid;
                return false;
            }
            var hasWhole = s.Length != before;

            ulong fraction = 0;
            var scale = 1.0;
            var hasFraction = false;
            if (!s.IsEmpty && s[0] == '.')
            {
                s = s[1..];
                before = s.Length;
                LeadingFraction(ref s, out fraction, out scale);
                hasFraction = s.Length != before;
            }
            if (!hasWhole && !hasFraction)
            {
                error = invalid; // "." or ".s"
                return false;
            }

            var unitLength = 0;
            while (unitLength < s.Length && !(s[unitLength] == '.' || char.IsAsciiDigit(s[unitLength])))
            {
                unitLength++;
            }
            if (unitLength == 0)
            {
                error = $"time: missing unit in duration {quoted}";
                return false;
            }
            var unitText = s[..unitLength];
            s = s[unitLength..];
            if (UnitNanoseconds(unitText) is not { } unit)
            {
                error = $"time: unknown unit {Quote(unitText.ToString())} in duration {quoted}";
                return false;
            }
            if (whole > MaxMagnitude / unit)
            {
                error = invalid;
                return false;
            }
            whole *= unit;
            if (fraction > 0)
            {
                // Go adds the fraction through a float64 and truncates, which we copy exactly.
                whole += (ulong)(fraction * (unit / scale));
                if (whole > MaxMagnitude)
                {
                    error = invalid;
                    return false;
                }
            }
            total += whole;
            if (total > MaxMagnitude)
            {
                error = invalid;
                return false;
            }
        }
        if (negative)
        {
            nanoseconds = total == MaxMagnitude ? long.MinValue : -(long)total;
        }
        else if (total > long.MaxValue)
        {
            error = invalid;
            return false;
        }
        else
        {
            nanoseconds = (long)total;
        }
        error = null;
        return true;
    }

    /// <summary>
    /// Formats nanoseconds as Go's <c>time.Duration.String</c> does, the form nats-server's texts carry:
    /// <c>1h0m0s</c>, <c>2m30s</c>, <c>1.5s</c>, <c>100ms</c>, <c>1.5µs</c>, <c>20ns</c>, <c>0s</c>.
    /// </summary>
    /// <param name="nanoseconds">The duration.</param>
    /// <returns>The text.</returns>
    public static string FormatDuration(long nanoseconds)
    {
        if (nanoseconds == 0)
        {
            return "0s";
        }

        var magnitude = nanoseconds < 0 ? (ulong)-(nanoseconds + 1) + 1 : (ulong)nanoseconds;
        var text = new StringBuilder(24);
        if (nanoseconds < 0)
        {
            text.Append('-');
        }

        if (magnitude < 1_000UL)
        {
            return text.Append(CultureInfo.InvariantCulture, $"{magnitude}ns").ToString();
        }

        if (magnitude < 1_000_000UL)
        {
            return AppendDecimal(text, magnitude, 3).Append("\u00b5s").ToString();
        }

        if (magnitude < 1_000_000_000UL)
        {
            return AppendDecimal(text, magnitude, 6).Append("ms").ToString();
        }

        var seconds = magnitude / 1_000_000_000UL;
        var minutes = seconds / 60;
        var hours = minutes / 60;
        if (hours > 0)
        {
            text.Append(CultureInfo.InvariantCulture, $"{hours}h");
        }

        if (minutes > 0)
        {
            text.Append(CultureInfo.InvariantCulture, $"{minutes % 60}m");
        }

        return AppendDecimal(text, (seconds % 60 * 1_000_000_000UL) + (magnitude % 1_000_000_000UL), 9).Append('s').ToString();
    }

    // value / 10^digits with the fraction's trailing zeros (and a bare point) left out, as Go's fmtFrac.
    private static StringBuilder AppendDecimal(StringBuilder text, ulong value, int digits)
    {
        var scale = 1UL;
        for (var i = 0; i < digits; i++)
        {
            scale *= 10;
        }

        text.Append(CultureInfo.InvariantCulture, $"{value / scale}");
        var fraction = value % scale;
        if (fraction == 0)
        {
            return text;
        }

        var fractionText = fraction.ToString(CultureInfo.InvariantCulture).PadLeft(digits, '0').TrimEnd('0');
        return text.Append('.').Append(fractionText);
    }

    private static ulong? UnitNanoseconds(ReadOnlySpan<char> unit) => unit switch
    {
        "ns" => 1UL,
        "us" or "\u00b5s" or "\u03bcs" => 1_000UL, // "us", micro sign, Greek mu
        "ms" => 1_000_000UL,
        "s" => 1_000_000_000UL,
        "m" => 60UL * 1_000_000_000,
        "h" => 3600UL * 1_000_000_000,
        _ => null,
    };

    // Digits up to the first non-digit; false when the value passes 2^63.
    private static bool TryLeadingInt(ref ReadOnlySpan<char> s, out ulong value)
    {
        value = 0;
        var i = 0;
        for (; i < s.Length && char.IsAsciiDigit(s[i]); i++)
        {
            if (value > MaxMagnitude / 10)
            {
                return false;
            }
            value = (value * 10) + (ulong)(s[i] - '0');
            if (value > MaxMagnitude)
            {
                return false;
            }
        }
        s = s[i..];
        return true;
    }

    // Digits after the point; digits beyond what fits are read but ignored, as Go does.
    private static void LeadingFraction(ref ReadOnlySpan<char> s, out ulong value, out double scale)
    {
        value = 0;
        scale = 1;
        var overflow = false;
        var i = 0;
        for (; i < s.Length && char.IsAsciiDigit(s[i]); i++)
        {
            if (overflow)
            {
                continue;
            }
            if (value > (MaxMagnitude - 1) / 10)
            {
                overflow = true;
                continue;
            }
            var next = (value * 10) + (ulong)(s[i] - '0');
            if (next > MaxMagnitude)
            {
                overflow = true;
                continue;
            }
            value = next;
            scale *= 10;
        }
        s = s[i..];
    }

    // Go's time.quote: double quotes, '"' and '\\' escaped, control and non-ASCII characters as
    // their UTF-8 bytes in \xHH form.
    private static string Quote(string text)
    {
        var builder = new StringBuilder(text.Length + 2).Append('"');
        Span<byte> utf8 = stackalloc byte[4];
        foreach (var rune in text.EnumerateRunes())
        {
            if (rune.Value is < ' ' or >= 0x80)
            {
                var length = rune.EncodeToUtf8(utf8);
                foreach (var b in utf8[..length])
                {
                    builder.Append(CultureInfo.InvariantCulture, $"\\x{b:x2}");
                }
                continue;
            }
            if (rune.Value is '"' or '\\')
            {
                builder.Append('\\');
            }
            builder.Append((char)rune.Value);
        }
        return builder.Append('"').ToString();
    }
}
