using System.Globalization;
using Broker.Abstractions;
using static Broker.Host.Configuration.Conf.Internal.ConfChars;

namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>
/// The states of string values: <c>'single quoted'</c> (raw), <c>"double quoted"</c> and bare words (escapes
/// decoded), and <c>( ... )</c> blocks of raw text. A bare word is also where booleans and <c>$variables</c> are told
/// apart from text.
/// </summary>
/// <param name="cursor">The text.</param>
/// <param name="tokens">Where strings are emitted.</param>
/// <param name="parts">The decoded escapes of the string being read.</param>
/// <param name="stack">What follows the string.</param>
internal sealed class ConfStringLexer(ConfCursor cursor, ConfTokenEmitter tokens, ConfTextParts parts, ConfStateStack stack)
{
    // The string an escape returns to: a double-quoted one or a bare word.
    private ConfLexState escaped = ConfLexState.String;

    /// <summary>Inside <c>'single quotes'</c>: no escapes, new lines allowed.</summary>
    public ConfLexState QuotedString()
    {
        var c = cursor.Read();
        if (c == '\'')
        {
            return EmitBeforeQuote();
        }

        if (c == Eof)
        {
            return cursor.HasPending ? throw cursor.Fail(cursor.Last, "Unexpected EOF.") : tokens.EmitEof();
        }

        return ConfLexState.QuotedString;
    }

    /// <summary>Inside <c>"double quotes"</c>: escapes decoded, new lines allowed.</summary>
    public ConfLexState DubQuotedString()
    {
        var c = cursor.Read();
        switch (c)
        {
            case '\\':
                return BeginEscape(ConfLexState.DubQuotedString);
            case '"':
                return EmitBeforeQuote();
            case Eof:
                return cursor.HasPending ? throw cursor.Fail(cursor.Last, "Unexpected EOF.") : tokens.EmitEof();
        }

        return ConfLexState.DubQuotedString;
    }

    /// <summary>
    /// An unquoted word: it ends at a blank, a new line, <c>;</c>, <c>,</c>, <c>]</c>, <c>}</c> or the end, and is then
    /// a boolean, a <c>$variable</c> or a string. A <c>'</c> also ends it and is dropped. Escapes are decoded.
    /// </summary>
    public ConfLexState BareString()
    {
        var c = cursor.Read();
        if (c == '\\')
        {
            return BeginEscape(ConfLexState.String);
        }

        if (c is '\n' or '\r' or Eof or ';' or ',' or ']' or '}' or ' ' or '\t')
        {
            cursor.Backup();
            if (parts.HasParts)
            {
                tokens.Emit(ConfTokenKind.String);
            }
            else if (ConfigSyntax.TryParseBool(cursor.PendingText, out _))
            {
                tokens.Emit(ConfTokenKind.Bool);
            }
            else if (cursor.At(cursor.PendingStart) == '$')
            {
                cursor.IgnoreFirst();
                tokens.Emit(ConfTokenKind.Variable);
            }
            else
            {
                tokens.Emit(ConfTokenKind.String);
            }

            return stack.Pop();
        }

        if (c == '\'')
        {
            return EmitBeforeQuote();
        }

        return ConfLexState.String;
    }

    /// <summary>A <c>\</c> has been read inside a double-quoted or bare string.</summary>
    public ConfLexState Escape()
    {
        var c = cursor.Read();
        return c switch
        {
            'x' => ConfLexState.StringBinary,
            't' => Decoded('\t'),
            'n' => Decoded('\n'),
            'r' => Decoded('\r'),
            '"' => Decoded('"'),
            '\\' => Decoded('\\'),
            _ => throw cursor.Fail(cursor.Last, $"Invalid escape character {Describe(c)}. Only the following escape characters are allowed: \\xXX, \\t, \\n, \\r, \\\", \\\\."),
        };
    }

    /// <summary><c>\x</c> has been read: exactly two hexadecimal digits make one byte.</summary>
    public ConfLexState Binary()
    {
        var first = cursor.Position;
        var hi = cursor.Read();
        if (IsNewLine(hi) || cursor.AtEnd)
        {
            throw cursor.Fail(cursor.Last, $"Expected two hexadecimal digits after '\\x', but hit end of {(cursor.AtEnd ? "file" : "line")}");
        }

        var lo = cursor.Read();
        if (IsNewLine(lo) || cursor.AtEnd)
        {
            throw cursor.Fail(cursor.Last, $"Expected two hexadecimal digits after '\\x', but hit end of {(cursor.AtEnd ? "file" : "line")}");
        }

        var hex = cursor.Slice(first, 2);
        if (!byte.TryParse(hex, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out var value))
        {
            throw cursor.Fail(first, $"Expected two hexadecimal digits after '\\x', but got '{hex}'");
        }

        parts.AddByte(value);
        cursor.Ignore();
        return escaped;
    }

    /// <summary>A <c>(</c> value: raw text up to a <c>)</c> alone on its line (the <c>'\n'</c> before it is kept).</summary>
    public ConfLexState Block()
    {
        while (true)
        {
            var c = cursor.Read();
            if (c == ')' && ClosesBlock(cursor.Last))
            {
                cursor.Backup();
                tokens.Emit(ConfTokenKind.String);
                cursor.Read();
                cursor.Ignore();
                return stack.Pop();
            }

            if (c == Eof)
            {
                throw cursor.Fail(cursor.Last, "Unexpected EOF processing block.");
            }
        }
    }

    // The closing quote has been read: the string is the text before it, the quote is dropped.
    private ConfLexState EmitBeforeQuote()
    {
        cursor.Backup();
        tokens.Emit(ConfTokenKind.String);
        cursor.Read();
        cursor.Ignore();
        return stack.Pop();
    }

    // Keeps the text read so far, minus the '\' just read, before the escape is decoded.
    private ConfLexState BeginEscape(ConfLexState resume)
    {
        parts.AddText(cursor.Pending(dropLast: 1));
        cursor.Ignore();
        escaped = resume;
        return ConfLexState.StringEscape;
    }

    private ConfLexState Decoded(char c)
    {
        parts.AddChar(c);
        cursor.Ignore();
        return escaped;
    }

    // nats-server closes a block only at a ')' right after a '\n' and right before a '\n' or the end; we also accept
    // "\r\n" after it so that files with Windows line ends can close blocks.
    private bool ClosesBlock(int paren)
    {
        if (paren == 0 || cursor.At(paren - 1) != '\n')
        {
            return false;
        }

        var after = cursor.At(paren + 1);
        return after is '\n' or Eof || (after == '\r' && cursor.At(paren + 2) == '\n');
    }
}
