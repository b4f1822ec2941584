namespace Broker.Host.Configuration.Conf;

// The states of the document level: top-level keys, optional top-level braces, comments.
internal sealed partial class ConfLexer
{
    private enum State
    {
        Done,
        Top,
        TopValueEnd,
        BlockStart,
        BlockValueEnd,
        BlockEnd,
        KeyStart,
        QuotedKey,
        DubQuotedKey,
        Key,
        KeyEnd,
        IncludeStart,
        Include,
        IncludeQuoted,
        IncludeDubQuoted,
        IncludeString,
        Value,
        ArrayValue,
        ArrayValueEnd,
        MapKeyStart,
        MapQuotedKey,
        MapDubQuotedKey,
        MapKey,
        MapKeyEnd,
        MapValue,
        MapValueEnd,
        QuotedString,
        DubQuotedString,
        String,
        StringEscape,
        StringBinary,
        Block,
        NumberStart,
        Number,
        ConvenientNumber,
        DateAfterYear,
        NegNumberStart,
        NegNumber,
        FloatStart,
        Float,
        IPAddr,
    }

    private State Step(State current) => current switch
    {
        State.Top => Top(),
        State.TopValueEnd => TopValueEnd(),
        State.BlockStart => BlockStart(),
        State.BlockValueEnd => BlockValueEnd(),
        State.BlockEnd => BlockEnd(),
        State.KeyStart => KeyStart(),
        State.QuotedKey => QuotedKey('\''),
        State.DubQuotedKey => QuotedKey('"'),
        State.Key => Key(),
        State.KeyEnd => KeyEnd(),
        State.IncludeStart => IncludeStart(),
        State.Include => Include(),
        State.IncludeQuoted => IncludeQuoted('\'', "Unexpected EOF in quoted include"),
        State.IncludeDubQuoted => IncludeQuoted('"', "Unexpected EOF in double quoted include"),
        State.IncludeString => IncludeString(),
        State.Value => Value(),
        State.ArrayValue => ArrayValue(),
        State.ArrayValueEnd => ArrayValueEnd(),
        State.MapKeyStart => MapKeyStart(),
        State.MapQuotedKey => MapQuotedKey('\'', "Unexpected EOF processing quoted map key."),
        State.MapDubQuotedKey => MapQuotedKey('"', "Unexpected EOF processing double quoted map key."),
        State.MapKey => MapKey(),
        State.MapKeyEnd => MapKeyEnd(),
        State.MapValue => MapValue(),
        State.MapValueEnd => MapValueEnd(),
        State.QuotedString => QuotedString(),
        State.DubQuotedString => DubQuotedString(),
        State.String => BareString(),
        State.StringEscape => StringEscape(),
        State.StringBinary => StringBinary(),
        State.Block => Block(),
        State.NumberStart => NumberStart(),
        State.Number => Number(),
        State.ConvenientNumber => ConvenientNumber(),
        State.DateAfterYear => DateAfterYear(),
        State.NegNumberStart => NegNumberStart(),
        State.NegNumber => NegNumber(),
        State.FloatStart => FloatStart(),
        State.Float => Float(),
        State.IPAddr => IPAddr(),
        _ => throw Fail(pos, $"BUG in lexer: no state {current}."),
    };

    // Between top-level entries. A '{' opens optional top-level braces (JSON-like files).
    private State Top()
    {
        var c = Read();
        if (IsSpace(c))
        {
            Ignore();
            return State.Top;
        }
        switch (c)
        {
            case '{':
                Push(State.Top);
                Ignore();
                return State.BlockStart;
            case '#':
                return SkipComment(State.Top);
            case '/':
                if (Read() == '/')
                {
                    return SkipComment(State.Top);
                }
                Backup();
                // A lone '/' cannot start a key here: nats-server reports it as an unexpected end.
                return EndOfInput();
            case Eof:
                return EndOfInput();
        }
        Backup();
        Push(State.TopValueEnd);
        return State.KeyStart;
    }

    // Unread text before the end (a lone '/', a NUL) is an error; otherwise the document ends.
    private State EndOfInput() =>
        pos > start ? throw Fail(start, "Unexpected EOF.") : EmitEof();

    // After a top-level value: only blanks, a comment, or a terminator may follow.
    private State TopValueEnd()
    {
        var c = Read();
        switch (c)
        {
            case '#':
                return SkipComment(State.Top);
            case '/':
                if (Read() == '/')
                {
                    return SkipComment(State.Top);
                }
                Backup();
                return State.TopValueEnd; // nats-server skips a lone '/' here
            case ' ' or '\t':
                return State.TopValueEnd;
            case '\n' or '\r' or Eof or ';' or ',' or '}':
                Ignore();
                return State.Top;
        }
        throw Fail(Last, $"Expected a top-level value to end with a new line, comment or EOF, but got {Describe(c)} instead.");
    }

    // Inside optional top-level braces; keys here belong to the document itself.
    private State BlockStart()
    {
        var c = Read();
        if (IsSpace(c))
        {
            Ignore();
            return State.BlockStart;
        }
        switch (c)
        {
            case '{':
                Push(State.BlockEnd);
                Ignore();
                return State.BlockStart;
            case '}':
                Ignore();
                return Pop();
            case '#':
                return SkipComment(State.BlockStart);
            case '/':
                if (Read() == '/')
                {
                    return SkipComment(State.BlockStart);
                }
                Backup();
                return EndOfInput();
            case Eof:
                return EndOfInput();
        }
        Backup();
        Push(State.BlockValueEnd);
        return State.KeyStart;
    }

    private State BlockValueEnd()
    {
        var c = Read();
        switch (c)
        {
            case '#':
                return SkipComment(State.BlockValueEnd);
            case '/':
                if (Read() == '/')
                {
                    return SkipComment(State.BlockValueEnd);
                }
                Backup();
                return State.BlockValueEnd;
            case ' ' or '\t':
                return State.BlockValueEnd;
            case '\n' or '\r' or ';' or ',':
                Ignore();
                return State.BlockStart;
            case '}':
                Backup();
                return State.BlockEnd;
        }
        throw Fail(Last, $"Expected a block-level value to end with a new line, comment or EOF, but got {Describe(c)} instead.");
    }

    private State BlockEnd()
    {
        var c = Read();
        switch (c)
        {
            case '#':
                return SkipComment(State.BlockStart);
            case '/':
                if (Read() == '/')
                {
                    return SkipComment(State.BlockStart);
                }
                Backup();
                return State.BlockEnd;
            case '\n' or '\r' or ' ' or '\t':
                return State.BlockEnd;
            case ';' or ',':
                Ignore();
                return State.BlockStart;
            case '}':
                Ignore();
                return Pop();
        }
        throw Fail(Last, $"Expected a block-level to end with a '}}', but got {Describe(c)} instead.");
    }

    // '#' or "//" has been read: the comment runs to the end of the line, which it leaves unread.
    private State SkipComment(State resume)
    {
        while (Peek() is not ('\n' or '\r' or Eof))
        {
            pos++;
        }
        Ignore();
        return resume;
    }
}
