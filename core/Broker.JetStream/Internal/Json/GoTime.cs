using System.Buffers.Text;
using System.Globalization;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Broker.JetStream.Internal.Json;

/// <summary>
/// Times as Go's <c>encoding/json</c> writes <c>time.Time</c>: RFC 3339 in UTC with up to nine fractional digits and
/// trailing zeros dropped (<c>2023-01-02T03:04:05.123456789Z</c>), the zero time as <c>0001-01-01T00:00:00Z</c>.
/// The engine keeps times as nanoseconds since the Unix epoch, the unit stores use.
/// </summary>
internal static class GoTime
{
    public const long TicksPerNanosecondDivisor = 100;

    /// <summary>Nanoseconds since the Unix epoch now.</summary>
    public static long NowNanoseconds() => (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * TicksPerNanosecondDivisor;

    /// <summary>Formats nanoseconds since the Unix epoch (0 is Go's zero time).</summary>
    public static string Format(long unixNanoseconds)
    {
        Span<byte> buffer = stackalloc byte[40];
        var written = Write(buffer, unixNanoseconds);
        return System.Text.Encoding.ASCII.GetString(buffer[..written]);
    }

    /// <summary>Writes the RFC 3339 form of <paramref name="unixNanoseconds"/> into <paramref name="destination"/> (at least 35 bytes).</summary>
    public static int Write(Span<byte> destination, long unixNanoseconds)
    {
        if (unixNanoseconds == 0)
        {
            "0001-01-01T00:00:00Z"u8.CopyTo(destination);
            return 20;
        }

        var seconds = Math.DivRem(unixNanoseconds, 1_000_000_000L, out var nanos);
        if (nanos < 0)
        {
            nanos += 1_000_000_000L;
            seconds--;
        }

        var time = DateTime.UnixEpoch.AddSeconds(seconds);
        var written = 0;
        Digits(destination, ref written, time.Year, 4);
        destination[written++] = (byte)'-';
        Digits(destination, ref written, time.Month, 2);
        destination[written++] = (byte)'-';
        Digits(destination, ref written, time.Day, 2);
        destination[written++] = (byte)'T';
        Digits(destination, ref written, time.Hour, 2);
        destination[written++] = (byte)':';
        Digits(destination, ref written, time.Minute, 2);
        destination[written++] = (byte)':';
        Digits(destination, ref written, time.Second, 2);
        if (nanos != 0)
        {
            var digits = 9;
            while (nanos % 10 == 0)
            {
                nanos /= 10;
                digits--;
            }

            destination[written++] = (byte)'.';
            Digits(destination, ref written, (int)nanos, digits);
        }

        destination[written++] = (byte)'Z';
        return written;
    }

    /// <summary>Parses an RFC 3339 time (any offset) to nanoseconds since the Unix epoch; Go's zero time is 0.</summary>
    public static bool TryParse(string text, out long unixNanoseconds)
    {
        unixNanoseconds = 0;
        if (text.StartsWith("0001-01-01T00:00:00", StringComparison.Ordinal))
        {
            return true;
        }

        // DateTimeOffset keeps only 100 ns ticks; the digits below are added back by hand.
        var fraction = 0L;
        var dot = text.IndexOf('.', StringComparison.Ordinal);
        var trimmed = text;
        if (dot > 0)
        {
            var end = dot + 1;
            while (end < text.Length && char.IsAsciiDigit(text[end]))
            {
                end++;
            }

            var digits = text[(dot + 1)..end];
            fraction = long.Parse(digits.PadRight(9, '0')[..9], CultureInfo.InvariantCulture);
            trimmed = text[..dot] + text[end..];
        }

        if (!DateTimeOffset.TryParse(trimmed, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out var parsed))
        {
            return false;
        }

        unixNanoseconds = ((parsed.UtcTicks - DateTime.UnixEpoch.Ticks) * TicksPerNanosecondDivisor) + fraction;
        return true;
    }

    private static void Digits(Span<byte> destination, ref int written, int value, int width)
    {
        for (var i = width - 1; i >= 0; i--)
        {
            destination[written + i] = (byte)('0' + (value % 10));
            value /= 10;
        }

        written += width;
    }
}

/// <summary>A <c>time.Time</c> field: nanoseconds since the Unix epoch written as RFC 3339 (see <see cref="GoTime"/>).</summary>
internal sealed class GoTimeConverter : JsonConverter<long>
{
    public override long Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return 0;
        }

        if (reader.TokenType != JsonTokenType.String || !GoTime.TryParse(reader.GetString()!, out var value))
        {
            throw new JsonException("not an RFC 3339 time");
        }

        return value;
    }

    public override void Write(Utf8JsonWriter writer, long value, JsonSerializerOptions options)
    {
        Span<byte> buffer = stackalloc byte[40];
        writer.WriteStringValue(buffer[..GoTime.Write(buffer, value)]);
    }
}

/// <summary>An optional <c>*time.Time</c> field (<c>opt_start_time</c>): absent or null when not set.</summary>
internal sealed class NullableGoTimeConverter : JsonConverter<long?>
{
    private static readonly GoTimeConverter Inner = new();

    public override long? Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        reader.TokenType == JsonTokenType.Null ? null : Inner.Read(ref reader, typeof(long), options);

    public override void Write(Utf8JsonWriter writer, long? value, JsonSerializerOptions options)
    {
        if (value is { } time)
        {
            Inner.Write(writer, time, options);
        }
        else
        {
            writer.WriteNullValue();
        }
    }
}

/// <summary>Writes an integer the way the ack subject and JSON need it, without allocating.</summary>
internal static class Ascii
{
    public static int Write(Span<byte> destination, ulong value) => Utf8Formatter.TryFormat(value, destination, out var written) ? written : 0;

    public static int Write(Span<byte> destination, long value) => Utf8Formatter.TryFormat(value, destination, out var written) ? written : 0;
}
