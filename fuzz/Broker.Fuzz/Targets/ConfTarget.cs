using System.Globalization;
using System.Text;
using Broker.Fuzz.Support;
using Broker.Host.Configuration.Conf;

namespace Broker.Fuzz.Targets;

/// <summary>
/// The <c>.conf</c> lexer and parser of the host (<see cref="ConfLexer"/>, <see cref="ConfParser"/>). The only error
/// allowed is <see cref="ConfException"/>. Invariants: the lexer ends (a bounded number of tokens, then end of input
/// for good) with positions inside the text; a document that parses, written back out in canonical syntax
/// (<see cref="ConfWriter"/>), parses to the same tree.
/// </summary>
internal sealed class ConfTarget : IFuzzTarget
{
    private static readonly string IncludeDirectory = Path.Combine(Path.GetTempPath(), "broker-fuzz-conf-" + Environment.ProcessId);

    public string Name => "conf";

    public void Run(ReadOnlySpan<byte> input)
    {
        var text = Encoding.UTF8.GetString(input);
        Lex(text);
        ConfMap document;
        try
        {
            document = Parse(text);
        }
        catch (ConfException)
        {
            return;
        }

        var written = ConfWriter.Write(document);
        if (written is null)
        {
            return;
        }

        ConfMap again;
        try
        {
            again = Parse(written);
        }
        catch (ConfException ex)
        {
            throw new InvariantViolation($"the written document does not parse ({ex.Message}):\n{written}");
        }

        var before = ConfWriter.Describe(document);
        var after = ConfWriter.Describe(again);
        InvariantViolation.Check(before == after, $"the written document parses to another tree:\n {before}\n {after}\n{written}");
    }

    private static ConfMap Parse(string text)
        => ConfParser.ParseText(text, "fuzz.conf", IncludeDirectory, name => name == "FUZZ_ENV" ? "42" : null);

    private static void Lex(string text)
    {
        var lexer = new ConfLexer(text, "fuzz.conf");
        try
        {
            for (var count = 0; ; count++)
            {
                InvariantViolation.Check(count <= text.Length + 2, "the lexer does not reach the end");
                var token = lexer.Next();
                InvariantViolation.Check(token.Position.Line >= 1 && token.Position.Column >= 1, $"token at {token.Position}");
                if (token.Kind == ConfTokenKind.Eof)
                {
                    InvariantViolation.Check(lexer.Next().Kind == ConfTokenKind.Eof, "the lexer continued after the end");
                    return;
                }
            }
        }
        catch (ConfException)
        {
        }
    }
}

/// <summary>Writes a parsed document back in canonical <c>.conf</c> syntax, and describes a tree for comparison.</summary>
internal static class ConfWriter
{
    /// <summary>The document as text, or <see langword="null"/> when a key cannot be written (no quoting fits it).</summary>
    public static string? Write(ConfMap document)
    {
        var text = new StringBuilder();
        foreach (var entry in document.Entries)
        {
            if (!AppendKey(text, entry.Key))
            {
                return null;
            }

            text.Append(" = ");
            if (!AppendValue(text, entry.Value))
            {
                return null;
            }

            text.Append('\n');
        }

        return text.ToString();
    }

    public static string Describe(ConfValue value) => value switch
    {
        ConfMap map => "{" + string.Join(", ", map.Entries.Select(e => Quote(e.Key) + ": " + Describe(e.Value))) + "}",
        ConfArray array => "[" + string.Join(", ", array.Items.Select(Describe)) + "]",
        ConfString s => "string " + Quote(s.Value),
        ConfInteger i => "integer " + i.Value.ToString(CultureInfo.InvariantCulture),
        ConfFloat f => "float " + f.Value.ToString("R", CultureInfo.InvariantCulture),
        ConfBool b => "bool " + b.Value,
        ConfDateTime d => "datetime " + d.Value.ToString("O", CultureInfo.InvariantCulture),
        _ => throw new InvariantViolation($"unknown value type {value.GetType().Name}"),
    };

    /// <summary>A float as digits, a point and digits (the only float syntax), exactly: the shortest round-trip digits with the exponent expanded.</summary>
    private static string PlainFloat(double value)
    {
        var text = value.ToString("R", CultureInfo.InvariantCulture);
        var e = text.IndexOf('E', StringComparison.Ordinal);
        if (e < 0)
        {
            return text.Contains('.', StringComparison.Ordinal) ? text : text + ".0";
        }

        var mantissa = text[..e];
        var exponent = int.Parse(text[(e + 1)..], CultureInfo.InvariantCulture);
        var negative = mantissa.StartsWith('-');
        mantissa = negative ? mantissa[1..] : mantissa;
        var dot = mantissa.IndexOf('.', StringComparison.Ordinal);
        var digits = mantissa.Replace(".", string.Empty, StringComparison.Ordinal);
        var point = (dot < 0 ? mantissa.Length : dot) + exponent;
        var plain = point <= 0 ? "0." + new string('0', -point) + digits
            : point >= digits.Length ? digits + new string('0', point - digits.Length) + ".0"
            : digits[..point] + "." + digits[point..];
        return (negative ? "-" : string.Empty) + plain;
    }

    private static string Quote(string text) => "\"" + string.Concat(text.Select(c => c is '"' or '\\' || char.IsControl(c) ? $"\\u{(int)c:x4}" : c.ToString())) + "\"";

    private static bool AppendKey(StringBuilder text, string key)
    {
        // Quoted keys take no escapes: use a quote the key does not hold.
        if (key.Contains('\0', StringComparison.Ordinal))
        {
            return false;
        }

        var quote = !key.Contains('"', StringComparison.Ordinal) ? '"' : !key.Contains('\'', StringComparison.Ordinal) ? '\'' : (char?)null;
        if (quote is null)
        {
            return false;
        }

        text.Append(quote.Value).Append(key).Append(quote.Value);
        return true;
    }

    private static bool AppendValue(StringBuilder text, ConfValue value)
    {
        switch (value)
        {
            case ConfMap map:
                text.Append("{\n");
                foreach (var entry in map.Entries)
                {
                    if (!AppendKey(text, entry.Key))
                    {
                        return false;
                    }

                    text.Append(": ");
                    if (!AppendValue(text, entry.Value))
                    {
                        return false;
                    }

                    text.Append('\n');
                }

                text.Append('}');
                return true;
            case ConfArray array:
                text.Append('[');
                for (var i = 0; i < array.Items.Count; i++)
                {
                    // nats-server's lexer reads "1]" as a string: a blank must end a number before the ']'.
                    text.Append(i == 0 ? string.Empty : " , ");
                    if (!AppendValue(text, array.Items[i]))
                    {
                        return false;
                    }
                }

                text.Append(" ]");
                return true;
            case ConfString s:
                text.Append('"');
                foreach (var b in Encoding.UTF8.GetBytes(s.Value))
                {
                    // Printable ASCII as is; everything else as \xXX bytes (the lexer reads them back as UTF-8).
                    if (b is >= 0x20 and < 0x7F && b is not ((byte)'"' or (byte)'\\'))
                    {
                        text.Append((char)b);
                    }
                    else
                    {
                        text.Append("\\x").Append(b.ToString("x2", CultureInfo.InvariantCulture));
                    }
                }

                text.Append('"');
                return true;
            case ConfInteger i:
                text.Append(i.Value.ToString(CultureInfo.InvariantCulture));
                return true;
            case ConfFloat f:
                if (!double.IsFinite(f.Value))
                {
                    return false;
                }

                text.Append(PlainFloat(f.Value));
                return true;
            case ConfBool b:
                text.Append(b.Value ? "true" : "false");
                return true;
            case ConfDateTime d:
                text.Append(d.Value.ToString("yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture));
                return true;
            default:
                return false;
        }
    }
}
