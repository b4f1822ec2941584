using System.Globalization;
using Broker.Abstractions;

namespace Broker.Host.Configuration.Conf;

// The start of any value, and the string forms: quoted, bare, escapes, '( ... )' blocks.
internal sealed partial class ConfLexer
{
    // Where any value starts (after a key, in an array, in a map). Blanks may precede it, a new
    // line may not: "foo =\n1" is an error although "foo\n1" is not, as in nats-server.
    private State Value()
    {
        var c = Read();
        if (IsWhitespace(c))
        {
            Ignore();
            return State.Value;
        }
        origin = Last;
        switch (c)
        {
            case '[':
                Ignore();
                Emit(ConfTokenKind.ArrayStart);
                return State.ArrayValue;
            case '{':
                Ignore();
                Emit(ConfTokenKind.MapStart);
                return State.MapKeyStart;
            case '\'':
                Ignore();
                return State.QuotedString;
            case '"':
                Ignore();
                stringState = State.DubQuotedString;
                return State.DubQuotedString;
            case '-':
                return State.NegNumberStart;
            case '(':
                Ignore();
                return State.Block;
            case '.':
                throw Fail(Last, "Floats must start with a digit");
            case '\n' or '\r':
                throw Fail(Last, "Expected value but found new line");
        }
        if (char.IsDigit(c))
        {
            Backup();
            return State.NumberStart;
        }
        Backup();
        stringState = State.String;
        return State.String;
    }

    // Inside 'single quotes': no escapes, new lines allowed.
    private State QuotedString()
    {
        var c = Read();
        if (c == '\'')
        {
            Backup();
            Emit(ConfTokenKind.String);
            Read();
            Ignore();
            return Pop();
        }
        if (c == Eof)
        {
            return pos > start ? throw Fail(Last, "Unexpected EOF.") : EmitEof();
        }
        return State.QuotedString;
    }

    // Inside "double quotes": escapes decoded, new lines allowed.
    private State DubQuotedString()
    {
        var c = Read();
        switch (c)
        {
            case '\\':
                AddCurrentPart(1);
                return State.StringEscape;
            case '"':
                Backup();
                Emit(ConfTokenKind.String);
                Read();
                Ignore();
                return Pop();
            case Eof:
                return pos > start ? throw Fail(Last, "Unexpected EOF.") : EmitEof();
        }
        return State.DubQuotedString;
    }

    // An unquoted word: it ends at a blank, a new line, ';', ',', ']', '}' or the end, and is then
    // a boolean, a $variable or a string. A "'" also ends it and is dropped. Escapes are decoded.
    private State BareString()
    {
        var c = Read();
        if (c == '\\')
        {
            AddCurrentPart(1);
            return State.StringEscape;
        }
        if (c is '\n' or '\r' or Eof or ';' or ',' or ']' or '}' or ' ' or '\t')
        {
            Backup();
            if (hasParts)
            {
                Emit(ConfTokenKind.String);
            }
            else if (IsBool(input[start..pos]))
            {
                Emit(ConfTokenKind.Bool);
            }
            else if (start < input.Length && input[start] == '$')
            {
                start++;
                Emit(ConfTokenKind.Variable);
            }
            else
            {
                Emit(ConfTokenKind.String);
            }
            return Pop();
        }
        if (c == '\'')
        {
            Backup();
            Emit(ConfTokenKind.String);
            Read();
            Ignore();
            return Pop();
        }
        return State.String;
    }

    private static bool IsBool(string word) => ConfigSyntax.TryParseBool(word, out _);

    // A '\' has been read inside a double-quoted or bare string.
    private State StringEscape()
    {
        var c = Read();
        return c switch
        {
            'x' => State.StringBinary,
            't' => AddPart('\t'),
            'n' => AddPart('\n'),
            'r' => AddPart('\r'),
            '"' => AddPart('"'),
            '\\' => AddPart('\\'),
            _ => throw Fail(Last, $"Invalid escape character {Describe(c)}. Only the following escape characters are allowed: \\xXX, \\t, \\n, \\r, \\\", \\\\."),
        };
    }

    // '\x' has been read: exactly two hexadecimal digits make one byte.
    private State StringBinary()
    {
        var first = pos;
        var hi = Read();
        if (IsNewLine(hi) || width == 0)
        {
            throw Fail(Last, $"Expected two hexadecimal digits after '\\x', but hit end of {(width == 0 ? "file" : "line")}");
        }
        var lo = Read();
        if (IsNewLine(lo) || width == 0)
        {
            throw Fail(Last, $"Expected two hexadecimal digits after '\\x', but hit end of {(width == 0 ? "file" : "line")}");
        }
        var hex = input.AsSpan(first, 2);
        if (!byte.TryParse(hex, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out var value))
        {
            throw Fail(first, $"Expected two hexadecimal digits after '\\x', but got '{hex}'");
        }
        return AddByte(value);
    }

    // A '(' value: raw text up to a ')' alone on its line (the '\n' before it is kept).
    private State Block()
    {
        while (true)
        {
            var c = Read();
            if (c == ')' && ClosesBlock(pos - 1))
            {
                pos--;
                Emit(ConfTokenKind.String);
                pos++;
                Ignore();
                return Pop();
            }
            if (c == Eof)
            {
                throw Fail(Last, "Unexpected EOF processing block.");
            }
        }
    }

    // nats-server closes a block only at a ')' right after a '\n' and right before a '\n' or the
    // end; we also accept "\r\n" after it so that files with Windows line ends can close blocks.
    private bool ClosesBlock(int paren)
    {
        if (paren == 0 || input[paren - 1] != '\n')
        {
            return false;
        }
        var after = paren + 1;
        return after >= input.Length
            || input[after] is '\n' or Eof
            || (input[after] == '\r' && after + 1 < input.Length && input[after + 1] == '\n');
    }
}
