using System.Globalization;
using Broker.Abstractions;

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
                    map.ClosePosition = token.Position;
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

    // The words and size suffixes are ConfigSyntax's, which plugins read their settings with too.
    private static ConfBool ParseBool(ConfToken token) => ConfigSyntax.TryParseBool(token.Text, out var value)
        ? new ConfBool(value, token.Position)
        : throw new ConfException(token.Position, $"expected boolean value, but got '{token.Text}'");

    private static ConfInteger ParseInteger(ConfToken token) => ConfigSyntax.TryParseSize(token.Text, out var value, out var error)
        ? new ConfInteger(value, token.Position)
        : throw new ConfException(token.Position, error);

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
