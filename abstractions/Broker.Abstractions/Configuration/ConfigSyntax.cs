using System.Diagnostics.CodeAnalysis;
using System.Globalization;

namespace Broker.Abstractions;

/// <summary>
/// The value syntax of nats-server configuration files for values that arrive as text: Go durations
/// (<c>"1m30s"</c>, <c>"500ms"</c>, <c>"2us"</c>), integers with size suffixes (<c>1MB</c>, <c>64KB</c>, <c>1k</c>)
/// and nats-server's boolean words (<c>true/yes/on</c>, <c>false/no/off</c>). The host's configuration-file parser and
/// <see cref="ConfigurationValues"/> both read values through it, so a value means the same wherever it is written.
/// </summary>
/// <remarks>Error messages are those of Go and of nats-server's configuration parser.</remarks>
public static partial class ConfigSyntax
{
    /// <summary>
    /// Parses an integer with an optional size suffix, as nats-server's configuration parser does: a single letter is a
    /// power of 1000 (<c>1k</c> = 1 000, <c>1M</c> = 1 000 000), with <c>b</c>, <c>i</c> or <c>ib</c> a power of 1024
    /// (<c>64KB</c> = 65 536, <c>1MiB</c> = 1 048 576); letters <c>k</c>, <c>m</c>, <c>g</c>, <c>t</c>, <c>p</c>,
    /// <c>e</c> in any case. A sign is allowed (<c>-1</c> often means "unlimited").
    /// </summary>
    /// <param name="text">The text.</param>
    /// <param name="value">The number, the suffix applied.</param>
    /// <param name="error">
    /// nats-server's message when the text is not such an integer: <c>expected integer, but got 'x'</c>,
    /// <c>integer '1Q' has an unknown size suffix 'Q'</c>, <c>integer '...' is out of the range</c>.
    /// </param>
    /// <returns><see langword="true"/> when the text is an integer.</returns>
    public static bool TryParseSize(string text, out long value, [NotNullWhen(false)] out string? error)
    {
        ArgumentNullException.ThrowIfNull(text);
        value = 0;
        var digits = 0;
        while (digits < text.Length && (char.IsDigit(text[digits]) || text[digits] == '-'))
        {
            digits++;
        }

        var number = text[..digits];
        if (!long.TryParse(number, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var parsed))
        {
            error = IsAsciiInteger(number) ? $"integer '{text}' is out of the range" : $"expected integer, but got '{text}'";
            return false;
        }

        if (SizeMultiplier(text[digits..].Trim().ToLowerInvariant()) is not { } multiplier)
        {
            error = $"integer '{text}' has an unknown size suffix '{text[digits..]}'";
            return false;
        }

        try
        {
            value = checked(parsed * multiplier);
        }
        catch (OverflowException)
        {
            error = $"integer '{text}' is out of the range";
            return false;
        }

        error = null;
        return true;
    }

    /// <summary>
    /// Parses nats-server's boolean words, in any letter case: <c>true</c>, <c>yes</c>, <c>on</c> and <c>false</c>,
    /// <c>no</c>, <c>off</c>.
    /// </summary>
    /// <param name="text">The text.</param>
    /// <param name="value">The truth value.</param>
    /// <returns><see langword="true"/> when the text is one of the six words.</returns>
    public static bool TryParseBool(string text, out bool value)
    {
        ArgumentNullException.ThrowIfNull(text);
        switch (text.ToLowerInvariant())
        {
            case "true" or "yes" or "on":
                value = true;
                return true;
            case "false" or "no" or "off":
                value = false;
                return true;
            default:
                value = false;
                return false;
        }
    }

    private static bool IsAsciiInteger(string number)
    {
        var digits = number.StartsWith('-') ? number.AsSpan(1) : number.AsSpan();
        return !digits.IsEmpty && !digits.ContainsAnyExceptInRange('0', '9');
    }

    // Single letters are powers of 1000; with 'b', 'i' or 'ib' they are powers of 1024. Null for a suffix nats-server
    // does not know.
    private static long? SizeMultiplier(string suffix)
    {
        if (suffix.Length == 0)
        {
            return 1;
        }

        var power = "kmgtpe".IndexOf(suffix[0], StringComparison.Ordinal) + 1;
        if (power == 0)
        {
            return null;
        }

        long unit = suffix[1..] switch
        {
            "" => 1000,
            "b" or "i" or "ib" => 1024,
            _ => 0,
        };
        if (unit == 0)
        {
            return null;
        }

        long multiplier = 1;
        for (var i = 0; i < power; i++)
        {
            multiplier *= unit; // 1024^6 = 2^60 still fits in a long
        }

        return multiplier;
    }
}
