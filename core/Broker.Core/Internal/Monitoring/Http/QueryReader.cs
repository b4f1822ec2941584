using System.Globalization;

namespace Broker.Core.Internal.Monitoring.Http;

/// <summary>
/// Reads typed query parameters the way nats-server's <c>decodeBool</c>/<c>decodeInt</c>/<c>decodeUint64</c> do:
/// absent or empty means the default, anything unparsable is an error with Go's wording. Only the first error is
/// kept (nats-server answers the first parameter that fails); reads after it return defaults.
/// </summary>
internal struct QueryReader(QueryString query)
{
    /// <summary>The first error, ready to be the body of a 400 answer.</summary>
    public string? Error { get; private set; }

    public readonly string Text(string name) => query.Get(name);

    public bool Bool(string name)
    {
        var text = query.Get(name);
        if (text.Length == 0 || Error is not null)
        {
            return false;
        }

        if (GoFormat.TryParseBool(text, out var value))
        {
            return value;
        }

        Error = $"Error decoding boolean for '{name}': {GoFormat.ParseError("ParseBool", text, outOfRange: false)}";
        return false;
    }

    public int Int(string name)
    {
        var text = query.Get(name);
        if (text.Length == 0 || Error is not null)
        {
            return 0;
        }

        // Go's int is 64 bits: larger values are valid and only clamped here.
        if (long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var value))
        {
            return (int)Math.Clamp(value, int.MinValue, int.MaxValue);
        }

        Error = $"Error decoding int for '{name}': {GoFormat.ParseError("Atoi", text, IsOutOfRange(text, signed: true))}";
        return 0;
    }

    public ulong UInt64(string name)
    {
        var text = query.Get(name);
        if (text.Length == 0 || Error is not null)
        {
            return 0;
        }

        if (ulong.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value))
        {
            return value;
        }

        Error = $"Error decoding uint64 for '{name}': {GoFormat.ParseError("ParseUint", text, IsOutOfRange(text, signed: false))}";
        return 0;
    }

    /// <summary>Records an error found by the caller (an unknown enumeration value, for example) unless one is kept.</summary>
    public void Fail(string error) => Error ??= error;

    // Well-formed digits (with a sign where the Go function takes one) that still failed to parse: too large.
    private static bool IsOutOfRange(string text, bool signed)
    {
        var digits = text.AsSpan();
        if (signed && digits.Length > 0 && digits[0] is '+' or '-')
        {
            digits = digits[1..];
        }

        return digits.Length > 0 && !digits.ContainsAnyExceptInRange('0', '9');
    }
}
