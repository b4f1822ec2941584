using static Broker.Host.Configuration.Conf.Internal.ConfChars;

namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>
/// The states of the document level: between top-level entries, after a top-level value, inside optional
/// top-level braces (JSON-like files), and comments there.
/// </summary>
/// <param name="cursor">The text.</param>
/// <param name="tokens">Where the end of input is emitted.</param>
/// <param name="stack">Where the state after a key's value is kept.</param>
internal sealed class ConfDocumentLexer(ConfCursor cursor, ConfTokenEmitter tokens, ConfStateStack stack)
{
    /// <summary>Between top-level entries. A <c>{</c> opens optional top-level braces.</summary>
    public ConfLexState Top()
    {
        var c = cursor.Read();
        if (IsSpace(c))
        {
            cursor.Ignore();
            return ConfLexState.Top;
        }

        switch (c)
        {
            case '{':
                stack.Push(ConfLexState.Top);
                cursor.Ignore();
                return ConfLexState.BlockStart;
            case '#':
                return SkipComment(ConfLexState.Top);
            case '/':
                if (cursor.Read() == '/')
                {
                    return SkipComment(ConfLexState.Top);
                }

                cursor.Backup();
                // A lone '/' cannot start a key here: nats-server reports it as an unexpected end.
                return EndOfInput();
            case Eof:
                return EndOfInput();
        }

        cursor.Backup();
        stack.Push(ConfLexState.TopValueEnd);
        return ConfLexState.KeyStart;
    }

    /// <summary>After a top-level value: only blanks, a comment, or a terminator may follow.</summary>
    public ConfLexState TopValueEnd()
    {
        var c = cursor.Read();
        switch (c)
        {
            case '#':
                return SkipComment(ConfLexState.Top);
            case '/':
                if (cursor.Read() == '/')
                {
                    return SkipComment(ConfLexState.Top);
                }

                cursor.Backup();
                return ConfLexState.TopValueEnd; // nats-server skips a lone '/' here
            case ' ' or '\t':
                return ConfLexState.TopValueEnd;
            case '\n' or '\r' or Eof or ';' or ',' or '}':
                cursor.Ignore();
                return ConfLexState.Top;
        }

        throw cursor.Fail(cursor.Last, $"Expected a top-level value to end with a new line, comment or EOF, but got {Describe(c)} instead.");
    }

    /// <summary>Inside optional top-level braces; keys here belong to the document itself.</summary>
    public ConfLexState BlockStart()
    {
        var c = cursor.Read();
        if (IsSpace(c))
        {
            cursor.Ignore();
            return ConfLexState.BlockStart;
        }

        switch (c)
        {
            case '{':
                stack.Push(ConfLexState.BlockEnd);
                cursor.Ignore();
                return ConfLexState.BlockStart;
            case '}':
                cursor.Ignore();
                return stack.Pop();
            case '#':
                return SkipComment(ConfLexState.BlockStart);
            case '/':
                if (cursor.Read() == '/')
                {
                    return SkipComment(ConfLexState.BlockStart);
                }

                cursor.Backup();
                return EndOfInput();
            case Eof:
                return EndOfInput();
        }

        cursor.Backup();
        stack.Push(ConfLexState.BlockValueEnd);
        return ConfLexState.KeyStart;
    }

    /// <summary>After a value inside top-level braces.</summary>
    public ConfLexState BlockValueEnd()
    {
        var c = cursor.Read();
        switch (c)
        {
            case '#':
                return SkipComment(ConfLexState.BlockValueEnd);
            case '/':
                if (cursor.Read() == '/')
                {
                    return SkipComment(ConfLexState.BlockValueEnd);
                }

                cursor.Backup();
                return ConfLexState.BlockValueEnd;
            case ' ' or '\t':
                return ConfLexState.BlockValueEnd;
            case '\n' or '\r' or ';' or ',':
                cursor.Ignore();
                return ConfLexState.BlockStart;
            case '}':
                cursor.Backup();
                return ConfLexState.BlockEnd;
        }

        throw cursor.Fail(cursor.Last, $"Expected a block-level value to end with a new line, comment or EOF, but got {Describe(c)} instead.");
    }

    /// <summary>Before the <c>}</c> that closes top-level braces.</summary>
    public ConfLexState BlockEnd()
    {
        var c = cursor.Read();
        switch (c)
        {
            case '#':
                return SkipComment(ConfLexState.BlockStart);
            case '/':
                if (cursor.Read() == '/')
                {
                    return SkipComment(ConfLexState.BlockStart);
                }

                cursor.Backup();
                return ConfLexState.BlockEnd;
            case '\n' or '\r' or ' ' or '\t':
                return ConfLexState.BlockEnd;
            case ';' or ',':
                cursor.Ignore();
                return ConfLexState.BlockStart;
            case '}':
                cursor.Ignore();
                return stack.Pop();
        }

        throw cursor.Fail(cursor.Last, $"Expected a block-level to end with a '}}', but got {Describe(c)} instead.");
    }

    // Unread text before the end (a lone '/', a NUL) is an error; otherwise the document ends.
    private ConfLexState EndOfInput() =>
        cursor.HasPending ? throw cursor.Fail(cursor.PendingStart, "Unexpected EOF.") : tokens.EmitEof();

    // '#' or "//" has been read: the comment runs to the end of the line, which it leaves unread.
    private ConfLexState SkipComment(ConfLexState resume)
    {
        cursor.IgnoreRestOfLine();
        return resume;
    }
}
