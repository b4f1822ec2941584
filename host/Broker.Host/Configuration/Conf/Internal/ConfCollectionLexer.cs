using static Broker.Host.Configuration.Conf.Internal.ConfChars;

namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>
/// The states between the values of <c>[ ... ]</c> arrays and <c>{ ... }</c> maps: separators, comments and the
/// closing bracket. The keys of maps are <see cref="ConfKeyLexer"/>'s, the values themselves start at
/// <see cref="ConfLexState.Value"/>.
/// </summary>
/// <param name="cursor">The text.</param>
/// <param name="tokens">Where closing brackets are emitted.</param>
/// <param name="stack">Where the state after each element, and after the whole collection, is kept.</param>
internal sealed class ConfCollectionLexer(ConfCursor cursor, ConfTokenEmitter tokens, ConfStateStack stack)
{
    /// <summary>Before an array element; new lines and comments are allowed, a stray <c>,</c> is not.</summary>
    public ConfLexState ArrayValue()
    {
        var c = cursor.Read();
        if (IsSpace(c))
        {
            cursor.Ignore();
            return ConfLexState.ArrayValue;
        }

        switch (c)
        {
            case '#':
                return SkipComment(ConfLexState.ArrayValue);
            case '/':
                if (cursor.Read() == '/')
                {
                    return SkipComment(ConfLexState.ArrayValue);
                }

                cursor.Backup();
                // nats-server reports a lone '/' here as if it were the ',' below.
                throw cursor.Fail(cursor.Position - 1, "Unexpected array value terminator ','.");
            case ',':
                throw cursor.Fail(cursor.Last, "Unexpected array value terminator ','.");
            case ']':
                return Close(ConfTokenKind.ArrayEnd);
        }

        cursor.Backup();
        stack.Push(ConfLexState.ArrayValueEnd);
        return ConfLexState.Value;
    }

    /// <summary>After an array element: <c>,</c> or a new line separates, <c>]</c> ends.</summary>
    public ConfLexState ArrayValueEnd()
    {
        var c = cursor.Read();
        switch (c)
        {
            case ' ' or '\t':
                cursor.Ignore();
                return ConfLexState.ArrayValueEnd;
            case '#':
                return SkipComment(ConfLexState.ArrayValueEnd);
            case '/':
                if (cursor.Read() == '/')
                {
                    return SkipComment(ConfLexState.ArrayValueEnd);
                }

                cursor.Backup();
                cursor.Ignore();
                return ConfLexState.ArrayValue; // a lone '/' separates elements, as in nats-server
            case ',' or '\n' or '\r':
                cursor.Ignore();
                return ConfLexState.ArrayValue;
            case ']':
                return Close(ConfTokenKind.ArrayEnd);
        }

        throw cursor.Fail(cursor.Last, $"Expected an array value terminator \",\" or an array terminator \"]\", but got {Describe(c)} instead.");
    }

    /// <summary>
    /// Before a map value. A <c>}</c> here closes the map although the key has no value; the parser rejects that
    /// (nats-server would silently move the key to the enclosing map).
    /// </summary>
    public ConfLexState MapValue()
    {
        var c = cursor.Read();
        if (IsSpace(c))
        {
            cursor.Ignore();
            return ConfLexState.MapValue;
        }

        switch (c)
        {
            case ',':
                throw cursor.Fail(cursor.Last, "Unexpected map value terminator \",\".");
            case '}':
                return Close(ConfTokenKind.MapEnd);
        }

        cursor.Backup();
        stack.Push(ConfLexState.MapValueEnd);
        return ConfLexState.Value;
    }

    /// <summary>After a map value: <c>,</c>, <c>;</c> or a new line separates, <c>}</c> ends.</summary>
    public ConfLexState MapValueEnd()
    {
        var c = cursor.Read();
        switch (c)
        {
            case ' ' or '\t':
                cursor.Ignore();
                return ConfLexState.MapValueEnd;
            case '#':
                return SkipComment(ConfLexState.MapValueEnd);
            case '/':
                if (cursor.Read() == '/')
                {
                    return SkipComment(ConfLexState.MapValueEnd);
                }

                cursor.Backup();
                cursor.Ignore();
                return ConfLexState.MapKeyStart; // a lone '/' separates entries, as in nats-server
            case ';' or ',' or '\n' or '\r':
                cursor.Ignore();
                return ConfLexState.MapKeyStart;
            case '}':
                return Close(ConfTokenKind.MapEnd);
        }

        throw cursor.Fail(cursor.Last, $"Expected a map value terminator \",\" or a map terminator \"}}\", but got {Describe(c)} instead.");
    }

    // The closing bracket has been read.
    private ConfLexState Close(ConfTokenKind kind)
    {
        tokens.EmitClosing(kind);
        return stack.Pop();
    }

    // '#' or "//" has been read: the comment runs to the end of the line, which it leaves unread.
    private ConfLexState SkipComment(ConfLexState resume)
    {
        cursor.IgnoreRestOfLine();
        return resume;
    }
}
