using static Broker.Host.Configuration.Conf.Internal.ConfChars;

namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>
/// The states of keys: top-level keys, keys of map values, and the <c>include</c> keyword that may stand where a key
/// does. Quoted keys take no escapes and may span lines.
/// </summary>
/// <param name="cursor">The text.</param>
/// <param name="tokens">Where keys and includes are emitted.</param>
/// <param name="stack">Where an include finds what follows it, and a map's closing <c>}</c> what follows the map.</param>
internal sealed class ConfKeyLexer(ConfCursor cursor, ConfTokenEmitter tokens, ConfStateStack stack)
{
    /// <summary>Before a top-level key (the caller has seen a character that is not a blank).</summary>
    public ConfLexState KeyStart()
    {
        var c = cursor.Peek();
        if (IsKeySeparator(c))
        {
            throw cursor.Fail(cursor.Position, $"Unexpected key separator {Describe(c)}");
        }

        if (IsSpace(c))
        {
            cursor.Read();
            cursor.Ignore();
            return ConfLexState.KeyStart;
        }

        if (c is '"' or '\'')
        {
            cursor.Read();
            cursor.Ignore();
            tokens.MarkOrigin(cursor.Position - 1);
            return c == '"' ? ConfLexState.DubQuotedKey : ConfLexState.QuotedKey;
        }

        cursor.Ignore();
        tokens.MarkOrigin(cursor.Position);
        cursor.Read();
        return ConfLexState.Key;
    }

    /// <summary>Inside a quoted top-level key; no escapes, new lines allowed.</summary>
    public ConfLexState QuotedKey(char quote)
    {
        var c = cursor.Peek();
        if (c == quote)
        {
            tokens.Emit(ConfTokenKind.Key);
            cursor.Read();
            cursor.Ignore();
            return ConfLexState.KeyEnd;
        }

        if (c == Eof)
        {
            return cursor.HasPending ? throw cursor.Fail(cursor.Position, "Unexpected EOF.") : tokens.EmitEof();
        }

        cursor.Read();
        return quote == '"' ? ConfLexState.DubQuotedKey : ConfLexState.QuotedKey;
    }

    /// <summary>Inside an unquoted top-level key: everything up to a blank, a separator or the end.</summary>
    public ConfLexState Key()
    {
        var c = cursor.Peek();
        if (IsSpace(c))
        {
            return KeyOrKeyword(ConfLexState.KeyEnd, resume: null);
        }

        if (IsKeySeparator(c) || c == Eof)
        {
            tokens.Emit(ConfTokenKind.Key);
            return ConfLexState.KeyEnd;
        }

        cursor.Read();
        return ConfLexState.Key;
    }

    /// <summary>After a top-level key: blanks (new lines included: <c>"foo\n1"</c> assigns 1) and one separator.</summary>
    public ConfLexState KeyEnd()
    {
        var c = cursor.Read();
        if (IsSpace(c))
        {
            cursor.Ignore();
            return ConfLexState.KeyEnd;
        }

        if (IsKeySeparator(c))
        {
            cursor.Ignore();
            return ConfLexState.Value;
        }

        if (c == Eof)
        {
            return tokens.EmitEof();
        }

        cursor.Backup();
        return ConfLexState.Value;
    }

    /// <summary>Before a key of a map value (or its closing <c>}</c>).</summary>
    public ConfLexState MapKeyStart()
    {
        var c = cursor.Peek();
        switch (c)
        {
            case '=' or ':':
                throw cursor.Fail(cursor.Position, $"Unexpected key separator {Describe(c)}.");
            case ']':
                throw cursor.Fail(cursor.Position, $"Unexpected array end {Describe(c)} processing map.");
            case '}':
                cursor.Read();
                tokens.EmitClosing(ConfTokenKind.MapEnd);
                return stack.Pop();
            case '#':
                cursor.Read();
                cursor.IgnoreRestOfLine();
                return ConfLexState.MapKeyStart;
            case '/':
                cursor.Read();
                if (cursor.Read() == '/')
                {
                    cursor.IgnoreRestOfLine();
                    return ConfLexState.MapKeyStart;
                }

                // Not a comment: nats-server drops the '/' and starts the key at the next character.
                cursor.Backup();
                break;
            case '\'':
                cursor.Read();
                cursor.Ignore();
                tokens.MarkOrigin(cursor.Position - 1);
                return ConfLexState.MapQuotedKey;
            case '"':
                cursor.Read();
                cursor.Ignore();
                tokens.MarkOrigin(cursor.Position - 1);
                return ConfLexState.MapDubQuotedKey;
            case Eof:
                throw cursor.Fail(cursor.Position, "Unexpected EOF processing map.");
            default:
                if (IsSpace(c))
                {
                    cursor.Read();
                    cursor.Ignore();
                    return ConfLexState.MapKeyStart;
                }

                break;
        }

        cursor.Ignore();
        tokens.MarkOrigin(cursor.Position);
        cursor.Read();
        return ConfLexState.MapKey;
    }

    /// <summary>Inside a quoted map key; no escapes, new lines allowed.</summary>
    public ConfLexState MapQuotedKey(char quote, string eofMessage)
    {
        var c = cursor.Peek();
        if (c == Eof)
        {
            throw cursor.Fail(cursor.Position, eofMessage);
        }

        if (c == quote)
        {
            tokens.Emit(ConfTokenKind.Key);
            cursor.Read();
            cursor.Ignore();
            return ConfLexState.MapKeyEnd;
        }

        cursor.Read();
        return quote == '"' ? ConfLexState.MapDubQuotedKey : ConfLexState.MapQuotedKey;
    }

    /// <summary>Inside an unquoted map key; a blank ends it (and may make it the <c>include</c> keyword).</summary>
    public ConfLexState MapKey()
    {
        var c = cursor.Peek();
        if (c == Eof)
        {
            throw cursor.Fail(cursor.Position, "Unexpected EOF processing map key.");
        }

        if (IsSpace(c))
        {
            return KeyOrKeyword(ConfLexState.MapKeyEnd, ConfLexState.MapValueEnd);
        }

        if (IsKeySeparator(c))
        {
            tokens.Emit(ConfTokenKind.Key);
            return ConfLexState.MapKeyEnd;
        }

        cursor.Read();
        return ConfLexState.MapKey;
    }

    /// <summary>After a map key: blanks (new lines included) and at most one separator before the value.</summary>
    public ConfLexState MapKeyEnd()
    {
        var c = cursor.Read();
        if (IsSpace(c))
        {
            cursor.Ignore();
            return ConfLexState.MapKeyEnd;
        }

        if (IsKeySeparator(c))
        {
            cursor.Ignore();
            return ConfLexState.MapValue;
        }

        cursor.Backup();
        return ConfLexState.MapValue;
    }

    /// <summary>After the <c>include</c> keyword: blanks within the line.</summary>
    public ConfLexState IncludeStart()
    {
        var c = cursor.Read();
        if (IsWhitespace(c))
        {
            cursor.Ignore();
            return ConfLexState.IncludeStart;
        }

        cursor.Backup();
        return ConfLexState.Include;
    }

    /// <summary>The first character of an include path: quoted, or bare unless it looks like another value.</summary>
    public ConfLexState Include()
    {
        var c = cursor.Read();
        switch (c)
        {
            case '\'':
                cursor.Ignore();
                return ConfLexState.IncludeQuoted;
            case '"':
                cursor.Ignore();
                return ConfLexState.IncludeDubQuoted;
            case '[':
                throw cursor.Fail(cursor.Last, "Expected include value but found start of an array");
            case '{':
                throw cursor.Fail(cursor.Last, "Expected include value but found start of a map");
            case '(':
                throw cursor.Fail(cursor.Last, "Expected include value but found start of a block");
            case '\\':
                throw cursor.Fail(cursor.Last, "Expected include value but found escape sequence");
            case '\n' or '\r':
                throw cursor.Fail(cursor.Last, "Expected include value but found new line");
        }

        if (c == '-' || char.IsDigit(c))
        {
            throw cursor.Fail(cursor.Last, "Expected include value but found start of a number");
        }

        cursor.Backup();
        return ConfLexState.IncludeString;
    }

    /// <summary>Inside a quoted include path.</summary>
    public ConfLexState IncludeQuoted(char quote, string eofMessage)
    {
        var c = cursor.Read();
        if (c == quote)
        {
            cursor.Backup();
            tokens.Emit(ConfTokenKind.Include);
            cursor.Read();
            cursor.Ignore();
            return stack.Pop();
        }

        if (c == Eof)
        {
            throw cursor.Fail(cursor.Last, eofMessage);
        }

        return quote == '"' ? ConfLexState.IncludeDubQuoted : ConfLexState.IncludeQuoted;
    }

    /// <summary>A bare include path: it ends at a blank, a new line, <c>;</c>, <c>}</c> or the end; a <c>'</c> ends it too and is dropped.</summary>
    public ConfLexState IncludeString()
    {
        var c = cursor.Read();
        if (c is '\n' or '\r' or Eof or ';' or '}' or ' ' or '\t')
        {
            cursor.Backup();
            tokens.Emit(ConfTokenKind.Include);
            return stack.Pop();
        }

        if (c == '\'')
        {
            cursor.Backup();
            tokens.Emit(ConfTokenKind.Include);
            cursor.Read();
            cursor.Ignore();
            return stack.Pop();
        }

        return ConfLexState.IncludeString;
    }

    // A key followed by a blank may be the 'include' keyword (any letter case); otherwise emit it. An include has no
    // value, so it returns to what follows a value: 'resume' when the caller has not pushed that already.
    private ConfLexState KeyOrKeyword(ConfLexState next, ConfLexState? resume)
    {
        if (string.Equals(cursor.PendingText.ToLowerInvariant(), "include", StringComparison.Ordinal))
        {
            cursor.Ignore();
            if (resume is { } r)
            {
                stack.Push(r);
            }

            return ConfLexState.IncludeStart;
        }

        tokens.Emit(ConfTokenKind.Key);
        return next;
    }
}
