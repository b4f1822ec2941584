using System.Globalization;

namespace Broker.Host.Configuration.Conf;

// Turning tokens into values: maps, arrays and the scalar conversions.
internal sealed partial class ConfParser
{
    // Maps and arrays are parsed recursively; a bound keeps absurd nesting from overflowing the
    // stack (which would end the process) and is far beyond any real configuration.
    private const int MaxNesting = 256;

    private int nesting;

    private ConfValue ParseValue(ConfToken token) => token.Kind switch
    {
        ConfTokenKind.String => new ConfString(token.Text, token.Position),
        ConfTokenKind.Bool => ParseBool(token),
        ConfTokenKind.Integer => ParseInteger(token),
        ConfTokenKind.Float => ParseFloat(token),
        ConfTokenKind.DateTime => ParseDateTime(token),
        ConfTokenKind.ArrayStart => ParseArray(token),
        ConfTokenKind.MapStart => ParseMap(token),
        ConfTokenKind.Variable => ResolveVariable(token),
        _ => throw Unexpected(token),
    };

    private ConfMap ParseMap(ConfToken open)
    {
        EnterNesting(open);
        var map = new ConfMap(open.Position);
        scopes.Add(map);
        while (true)
        {
            var token = lexer.Next();
            switch (token.Kind)
            {
                case ConfTokenKind.MapEnd:
                    scopes.RemoveAt(scopes.Count - 1);
                    nesting--;
                    return map;
                case ConfTokenKind.Key:
                    var valueToken = lexer.Next();
                    if (valueToken.Kind == ConfTokenKind.MapEnd)
                    {
                        // nats-server would assign the map itself to this key in the enclosing map.
                        throw new ConfException(token.Position, $"key '{token.Text}' has no value");
                    }
                    map.Set(new ConfEntry(token.Text, token.Position, ParseValue(valueToken)));
                    break;
                case ConfTokenKind.Include:
                    Include(map, token);
                    break;
                default:
                    throw Unexpected(token);
            }
        }
    }

    private ConfArray ParseArray(ConfToken open)
    {
        EnterNesting(open);
        var items = new List<ConfValue>();
        while (true)
        {
            var token = lexer.Next();
            if (token.Kind == ConfTokenKind.ArrayEnd)
            {
                nesting--;
                return new ConfArray(items, open.Position);
            }
            items.Add(ParseValue(token));
        }
    }

    private void EnterNesting(ConfToken open)
    {
        if (++nesting > MaxNesting)
        {
            throw new ConfException(open.Position, $"maps and arrays nest deeper than {MaxNesting} levels");
        }
    }

    private static ConfBool ParseBool(ConfToken token) => token.Text.ToLowerInvariant() switch
    {
        "true" or "yes" or "on" => new ConfBool(true, token.Position),
        "false" or "no" or "off" => new ConfBool(false, token.Position),
        _ => throw new ConfException(token.Position, $"expected boolean value, but got '{token.Text}'"),
    };

    // Digits (and sign) then an optional size suffix: k=1000, kb/ki/kib=1024, and so on to e/eb.
    private static ConfInteger ParseInteger(ConfToken token)
    {
        var text = token.Text;
        var digits = 0;
        while (digits < text.Length && (char.IsDigit(text[digits]) || text[digits] == '-'))
        {
            digits++;
        }
        var number = text[..digits];
        if (!long.TryParse(number, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var value))
        {
            throw new ConfException(token.Position, IsAsciiInteger(number)
                ? $"integer '{text}' is out of the range"
                : $"expected integer, but got '{text}'");
        }
        var suffix = text[digits..].Trim().ToLowerInvariant();
        var multiplier = SizeMultiplier(suffix)
            ?? throw new ConfException(token.Position, $"integer '{text}' has an unknown size suffix '{text[digits..]}'");
        try
        {
            return new ConfInteger(checked(value * multiplier), token.Position);
        }
        catch (OverflowException)
        {
            throw new ConfException(token.Position, $"integer '{text}' is out of the range");
        }
    }

    private static bool IsAsciiInteger(string number)
    {
        var digits = number.StartsWith('-') ? number.AsSpan(1) : number.AsSpan();
        return !digits.IsEmpty && !digits.ContainsAnyExceptInRange('0', '9');
    }

    // Single letters are powers of 1000; with 'b', 'i' or 'ib' they are powers of 1024 ("1M" is
    // 1 000 000, "1MB" is 1 048 576). Null for a suffix nats-server does not know.
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

    private static ConfFloat ParseFloat(ConfToken token)
    {
        if (!double.TryParse(token.Text, NumberStyles.AllowLeadingSign | NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var value))
        {
            throw new ConfException(token.Position, $"expected float, but got '{token.Text}'");
        }
        return double.IsInfinity(value)
            ? throw new ConfException(token.Position, $"float '{token.Text}' is out of the range")
            : new ConfFloat(value, token.Position);
    }

    private static ConfDateTime ParseDateTime(ConfToken token)
    {
        const DateTimeStyles Utc = DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal;
        return DateTime.TryParseExact(token.Text, "yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture, Utc, out var value)
            ? new ConfDateTime(value, token.Position)
            : throw new ConfException(token.Position, $"expected Zulu formatted DateTime, but got '{token.Text}'");
    }
}
