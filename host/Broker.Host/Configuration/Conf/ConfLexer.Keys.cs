namespace Broker.Host.Configuration.Conf;

// The states of top-level keys and of the 'include' keyword.
internal sealed partial class ConfLexer
{
    // Before a top-level key (the caller has seen a character that is not a blank).
    private State KeyStart()
    {
        var c = Peek();
        if (IsKeySeparator(c))
        {
            throw Fail(pos, $"Unexpected key separator {Describe(c)}");
        }
        if (IsSpace(c))
        {
            Read();
            Ignore();
            return State.KeyStart;
        }
        if (c is '"' or '\'')
        {
            Read();
            Ignore();
            origin = pos - 1;
            return c == '"' ? State.DubQuotedKey : State.QuotedKey;
        }
        Ignore();
        origin = pos;
        Read();
        return State.Key;
    }

    // Inside a quoted top-level key; no escapes, new lines allowed.
    private State QuotedKey(char quote)
    {
        var c = Peek();
        if (c == quote)
        {
            Emit(ConfTokenKind.Key);
            Read();
            Ignore();
            return State.KeyEnd;
        }
        if (c == Eof)
        {
            return pos > start ? throw Fail(pos, "Unexpected EOF.") : EmitEof();
        }
        Read();
        return quote == '"' ? State.DubQuotedKey : State.QuotedKey;
    }

    // Inside an unquoted top-level key: everything up to a blank, a separator or the end.
    private State Key()
    {
        var c = Peek();
        if (IsSpace(c))
        {
            return KeyOrKeyword(State.KeyEnd, resume: null);
        }
        if (IsKeySeparator(c) || c == Eof)
        {
            Emit(ConfTokenKind.Key);
            return State.KeyEnd;
        }
        Read();
        return State.Key;
    }

    // A key followed by a blank may be the 'include' keyword (any letter case); otherwise emit it.
    // An include has no value, so it returns to what follows a value: 'resume' when the caller
    // has not pushed that already.
    private State KeyOrKeyword(State next, State? resume)
    {
        if (string.Equals(input[start..pos].ToLowerInvariant(), "include", StringComparison.Ordinal))
        {
            Ignore();
            if (resume is { } r)
            {
                Push(r);
            }
            return State.IncludeStart;
        }
        Emit(ConfTokenKind.Key);
        return next;
    }

    // After a top-level key: blanks (new lines included: "foo\n1" assigns 1) and one separator.
    private State KeyEnd()
    {
        var c = Read();
        if (IsSpace(c))
        {
            Ignore();
            return State.KeyEnd;
        }
        if (IsKeySeparator(c))
        {
            Ignore();
            return State.Value;
        }
        if (c == Eof)
        {
            return EmitEof();
        }
        Backup();
        return State.Value;
    }

    private State IncludeStart()
    {
        var c = Read();
        if (IsWhitespace(c))
        {
            Ignore();
            return State.IncludeStart;
        }
        Backup();
        return State.Include;
    }

    // The first character of an include path: quoted, or bare unless it looks like another value.
    private State Include()
    {
        var c = Read();
        switch (c)
        {
            case '\'':
                Ignore();
                return State.IncludeQuoted;
            case '"':
                Ignore();
                return State.IncludeDubQuoted;
            case '[':
                throw Fail(Last, "Expected include value but found start of an array");
            case '{':
                throw Fail(Last, "Expected include value but found start of a map");
            case '(':
                throw Fail(Last, "Expected include value but found start of a block");
            case '\\':
                throw Fail(Last, "Expected include value but found escape sequence");
            case '\n' or '\r':
                throw Fail(Last, "Expected include value but found new line");
        }
        if (c == '-' || char.IsDigit(c))
        {
            throw Fail(Last, "Expected include value but found start of a number");
        }
        Backup();
        return State.IncludeString;
    }

    private State IncludeQuoted(char quote, string eofMessage)
    {
        var c = Read();
        if (c == quote)
        {
            Backup();
            Emit(ConfTokenKind.Include);
            Read();
            Ignore();
            return Pop();
        }
        if (c == Eof)
        {
            throw Fail(Last, eofMessage);
        }
        return quote == '"' ? State.IncludeDubQuoted : State.IncludeQuoted;
    }

    // A bare include path ends at a blank, a new line, ';', '}' or the end; a "'" ends it too and is dropped.
    private State IncludeString()
    {
        var c = Read();
        if (c is '\n' or '\r' or Eof or ';' or '}' or ' ' or '\t')
        {
            Backup();
            Emit(ConfTokenKind.Include);
            return Pop();
        }
        if (c == '\'')
        {
            Backup();
            Emit(ConfTokenKind.Include);
            Read();
            Ignore();
            return Pop();
        }
        return State.IncludeString;
    }
}
