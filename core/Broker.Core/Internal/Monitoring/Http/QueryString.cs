using System.Text;

namespace Broker.Core.Internal.Monitoring.Http;

/// <summary>
/// A decoded query string, read like Go's <c>url.Values.Get</c>: the first value of a name, empty when absent.
/// Names are case-sensitive. A malformed escape makes the whole query invalid (answered with 400).
/// </summary>
internal sealed class QueryString
{
    private readonly List<KeyValuePair<string, string>> pairs;

    private QueryString(List<KeyValuePair<string, string>> pairs)
    {
        this.pairs = pairs;
    }

    public static QueryString Empty { get; } = new([]);

    /// <summary>A query of the given names and values, as if decoded (the <c>$SYS</c> requests' options become one).</summary>
    public static QueryString From(IEnumerable<KeyValuePair<string, string>> pairs) => new([.. pairs]);

    /// <summary>Parses <c>a=1&amp;b=x+y</c>; <see langword="null"/> when an escape is malformed.</summary>
    public static QueryString? Parse(string raw)
    {
        if (raw.Length == 0)
        {
            return Empty;
        }

        var pairs = new List<KeyValuePair<string, string>>();
        foreach (var part in raw.Split('&'))
        {
            if (part.Length == 0)
            {
                continue;
            }

            var equals = part.IndexOf('=', StringComparison.Ordinal);
            var name = TryUnescape(equals < 0 ? part : part[..equals], plusIsSpace: true);
            var value = equals < 0 ? string.Empty : TryUnescape(part[(equals + 1)..], plusIsSpace: true);
            if (name is null || value is null)
            {
                return null;
            }

            pairs.Add(new(name, value));
        }

        return new QueryString(pairs);
    }

    /// <summary>The first value of <paramref name="name"/>, or an empty string.</summary>
    public string Get(string name)
    {
        foreach (var pair in pairs)
        {
            if (pair.Key == name)
            {
                return pair.Value;
            }
        }

        return string.Empty;
    }

    /// <summary>The first value of each name.</summary>
    public IReadOnlyDictionary<string, string> ToDictionary()
    {
        var map = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var pair in pairs)
        {
            map.TryAdd(pair.Key, pair.Value);
        }

        return map;
    }

    /// <summary>Decodes %XX escapes (as UTF-8) and, in queries, '+' as a space; <see langword="null"/> when malformed.</summary>
    public static string? TryUnescape(string text, bool plusIsSpace)
    {
        if (text.AsSpan().IndexOfAny('%', '+') < 0)
        {
            return text;
        }

        // Escapes encode bytes, so decode at the byte level and read the result as UTF-8.
        var source = Encoding.UTF8.GetBytes(text);
        var decoded = new byte[source.Length];
        var length = 0;
        for (var i = 0; i < source.Length; i++)
        {
            var b = source[i];
            if (b == '%')
            {
                if (i + 2 >= source.Length || !char.IsAsciiHexDigit((char)source[i + 1]) || !char.IsAsciiHexDigit((char)source[i + 2]))
                {
                    return null;
                }

                decoded[length++] = (byte)((HexValue((char)source[i + 1]) << 4) | HexValue((char)source[i + 2]));
                i += 2;
            }
            else
            {
                decoded[length++] = b == '+' && plusIsSpace ? (byte)' ' : b;
            }
        }

        return Encoding.UTF8.GetString(decoded, 0, length);
    }

    private static int HexValue(char c) => c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}
