using System.Globalization;
using System.Text;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// Go's text forms that nats-server puts in monitoring JSON and messages: <c>time.Duration.String()</c> (rtt, option
/// errors), its uptime form (<c>myUptime</c>: "1d2h3m4s") and the <c>strconv</c> parse errors of query values.
/// </summary>
internal static class GoFormat
{
    private const long NanosecondsPerSecond = 1_000_000_000;

    /// <summary>Go's <c>time.Duration.String()</c>: "0s", "850ns", "1.5µs", "8.020589ms", "1h2m3.5s".</summary>
    public static string Duration(TimeSpan duration)
    {
        // TimeSpan counts 100 ns ticks; Go counts nanoseconds.
        var nanoseconds = duration.Ticks * 100;
        if (nanoseconds == 0)
        {
            return "0s";
        }

        var negative = nanoseconds < 0;
        var magnitude = negative ? (ulong)(-(nanoseconds + 1)) + 1 : (ulong)nanoseconds;
        var text = new StringBuilder(24);
        if (magnitude < NanosecondsPerSecond)
        {
            if (magnitude < 1_000)
            {
                text.Append(magnitude.ToString(CultureInfo.InvariantCulture)).Append("ns");
            }
            else if (magnitude < 1_000_000)
            {
                AppendFraction(text, magnitude, 3);
                text.Append("µs");
            }
            else
            {
                AppendFraction(text, magnitude, 6);
                text.Append("ms");
            }
        }
        else
        {
            var seconds = magnitude / NanosecondsPerSecond;
            var minutes = seconds / 60;
            var hours = minutes / 60;
            if (hours > 0)
            {
                text.Append(hours.ToString(CultureInfo.InvariantCulture)).Append('h');
            }

            if (minutes > 0)
            {
                text.Append((minutes % 60).ToString(CultureInfo.InvariantCulture)).Append('m');
            }

            AppendFraction(text, (seconds % 60 * NanosecondsPerSecond) + (magnitude % NanosecondsPerSecond), 9);
            text.Append('s');
        }

        return negative ? "-" + text : text.ToString();
    }

    /// <summary>nats-server's uptime form: whole seconds, with minutes, hours, days and years as needed.</summary>
    public static string Uptime(TimeSpan duration)
    {
        var seconds = Math.Max((long)duration.TotalSeconds, 0);
        var minutes = seconds / 60;
        var hours = minutes / 60;
        var days = hours / 24;
        var years = days / 365;
        var c = CultureInfo.InvariantCulture;
        if (years > 0)
        {
            return string.Create(c, $"{years}y{days % 365}d{hours % 24}h{minutes % 60}m{seconds % 60}s");
        }

        if (days > 0)
        {
            return string.Create(c, $"{days}d{hours % 24}h{minutes % 60}m{seconds % 60}s");
        }

        if (hours > 0)
        {
            return string.Create(c, $"{hours}h{minutes % 60}m{seconds % 60}s");
        }

        return minutes > 0 ? string.Create(c, $"{minutes}m{seconds % 60}s") : string.Create(c, $"{seconds}s");
    }

    /// <summary>Go's <c>strconv.ParseBool</c>: 1, t, T, TRUE, true, True and their false counterparts.</summary>
    public static bool TryParseBool(string text, out bool value)
    {
        switch (text)
        {
            case "1" or "t" or "T" or "TRUE" or "true" or "True":
                value = true;
                return true;
            case "0" or "f" or "F" or "FALSE" or "false" or "False":
                value = false;
                return true;
            default:
                value = false;
                return false;
        }
    }

    /// <summary>The text of Go's <c>strconv</c> error, e.g. <c>strconv.Atoi: parsing "x": invalid syntax</c>.</summary>
    public static string ParseError(string function, string text, bool outOfRange)
        => $"strconv.{function}: parsing {Clients.GoQuote.Quote(Encoding.UTF8.GetBytes(text))}: {(outOfRange ? "value out of range" : "invalid syntax")}";

    // Appends value / 10^precision with the fraction's trailing zeros (and a bare '.') removed, as Go's fmtFrac does.
    private static void AppendFraction(StringBuilder text, ulong value, int precision)
    {
        ulong scale = 1;
        for (var i = 0; i < precision; i++)
        {
            scale *= 10;
        }

        text.Append((value / scale).ToString(CultureInfo.InvariantCulture));
        var fraction = value % scale;
        if (fraction == 0)
        {
            return;
        }

        var digits = fraction.ToString(CultureInfo.InvariantCulture).PadLeft(precision, '0').TrimEnd('0');
        text.Append('.').Append(digits);
    }
}
