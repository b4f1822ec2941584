namespace Broker.Host.Configuration.Conf;

// The states inside '[ ... ]' arrays and '{ ... }' map values.
internal sealed partial class ConfLexer
{
    // Before an array element; new lines and comments are allowed, a stray ',' is not.
    private State ArrayValue()
    {
        var c = Read();
        if (IsSpace(c))
        {
            Ignore();
            return State.ArrayValue;
        }
        switch (c)
        {
            case '#':
                return SkipComment(State.ArrayValue);
            case '/':
                if (Read() == '/')
                {
                    return SkipComment(State.ArrayValue);
                }
                Backup();
                // nats-server reports a lone '/' here as if it were the ',' below.
                throw Fail(pos - 1, "Unexpected array value terminator ','.");
            case ',':
                throw Fail(Last, "Unexpected array value terminator ','.");
            case ']':
                return ArrayEnd();
        }
        Backup();
        Push(State.ArrayValueEnd);
        return State.Value;
    }

    // After an array element: ',' or a new line separates, ']' ends.
    private State ArrayValueEnd()
    {
        var c = Read();
        switch (c)
        {
            case ' ' or '\t':
                Ignore();
                return State.ArrayValueEnd;
            case '#':
                return SkipComment(State.ArrayValueEnd);
            case '/':
                if (Read() == '/')
                {
                    return SkipComment(State.ArrayValueEnd);
                }
                Backup();
                Ignore();
                return State.ArrayValue; // a lone '/' separates elements, as in nats-server
            case ',' or '\n' or '\r':
                Ignore();
                return State.ArrayValue;
            case ']':
                return ArrayEnd();
        }
        throw Fail(Last, $"Expected an array value terminator \",\" or an array terminator \"]\", but got {Describe(c)} instead.");
    }

    // ']' has been read.
    private State ArrayEnd()
    {
        Ignore();
        origin = pos - 1;
        Emit(ConfTokenKind.ArrayEnd);
        return Pop();
    }

    // '}' has been read.
    private State MapEnd()
    {
        Ignore();
        origin = pos - 1;
        Emit(ConfTokenKind.MapEnd);
        return Pop();
    }

    // Before a key of a map value (or its closing '}').
    private State MapKeyStart()
    {
        var c = Peek();
        switch (c)
        {
            case '=' or ':':
                throw Fail(pos, $"Unexpected key separator {Describe(c)}.");
            case ']':
                throw Fail(pos, $"Unexpected array end {Describe(c)} processing map.");
            case '}':
                Read();
                return MapEnd();
            case '#':
                Read();
                return SkipComment(State.MapKeyStart);
            case '/':
                Read();
                if (Read() == '/')
                {
                    return SkipComment(State.MapKeyStart);
                }
                // Not a comment: nats-server drops the '/' and starts the key at the next character.
                Backup();
                break;
            case '\'':
                Read();
                Ignore();
                origin = pos - 1;
                return State.MapQuotedKey;
            case '"':
                Read();
                Ignore();
                origin = pos - 1;
                return State.MapDubQuotedKey;
            case Eof:
                throw Fail(pos, "Unexpected EOF processing map.");
            default:
                if (IsSpace(c))
                {
                    Read();
                    Ignore();
                    return State.MapKeyStart;
                }
                break;
        }
        Ignore();
        origin = pos;
        Read();
        return State.MapKey;
    }

    private State MapQuotedKey(char quote, string eofMessage)
    {
        var c = Peek();
        if (c == Eof)
        {
            throw Fail(pos, eofMessage);
        }
        if (c == quote)
        {
            Emit(ConfTokenKind.Key);
            Read();
            Ignore();
            return State.MapKeyEnd;
        }
        Read();
        return quote == '"' ? State.MapDubQuotedKey : State.MapQuotedKey;
    }

    // Inside an unquoted map key; a blank ends it (and may make it the 'include' keyword).
    private State MapKey()
    {
        var c = Peek();
        if (c == Eof)
        {
            throw Fail(pos, "Unexpected EOF processing map key.");
        }
        if (IsSpace(c))
        {
            return KeyOrKeyword(State.MapKeyEnd, State.MapValueEnd);
        }
        if (IsKeySeparator(c))
        {
            Emit(ConfTokenKind.Key);
            return State.MapKeyEnd;
        }
        Read();
        return State.MapKey;
    }

    // After a map key: blanks (new lines included) and at most one separator before the value.
    private State MapKeyEnd()
    {
        var c = Read();
        if (IsSpace(c))
        {
            Ignore();
            return State.MapKeyEnd;
        }
        if (IsKeySeparator(c))
        {
            Ignore();
            return State.MapValue;
        }
        Backup();
        return State.MapValue;
    }

    // Before a map value. A '}' here closes the map although the key has no value; the parser
    // rejects that (nats-server would silently move the key to the enclosing map).
    private State MapValue()
    {
        var c = Read();
        if (IsSpace(c))
        {
            Ignore();
            return State.MapValue;
        }
        switch (c)
        {
            case ',':
                throw Fail(Last, "Unexpected map value terminator \",\".");
            case '}':
                return MapEnd();
        }
        Backup();
        Push(State.MapValueEnd);
        return State.Value;
    }

    // After a map value: ',', ';' or a new line separates, '}' ends.
    private State MapValueEnd()
    {
        var c = Read();
        switch (c)
        {
            case ' ' or '\t':
                Ignore();
                return State.MapValueEnd;
            case '#':
                return SkipComment(State.MapValueEnd);
            case '/':
                if (Read() == '/')
                {
                    return SkipComment(State.MapValueEnd);
                }
                Backup();
                Ignore();
                return State.MapKeyStart; // a lone '/' separates entries, as in nats-server
            case ';' or ',' or '\n' or '\r':
                Ignore();
                return State.MapKeyStart;
            case '}':
                return MapEnd();
        }
        throw Fail(Last, $"Expected a map value terminator \",\" or a map terminator \"}}\", but got {Describe(c)} instead.");
    }
}
