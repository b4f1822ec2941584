using Broker.Host.Configuration.Conf.Internal;
using static Broker.Host.Configuration.Conf.Internal.ConfChars;

namespace Broker.Host.Configuration.Conf;

/// <summary>
/// Splits nats-server configuration text into <see cref="ConfToken"/>s.
/// </summary>
/// <remarks>
/// <para>nats-server's lexer (conf/lex.go) is a pushdown state machine whose quirks are part of the file format users
/// rely on: <c>foo 1</c> and <c>foo\n1</c> are assignments, <c>1k</c> is an integer but <c>1kx</c> a string, a number
/// directly followed by <c>]</c> swallows the bracket, a top-level key starting with <c>/</c> is an "Unexpected EOF".
/// To read every file the same way, this lexer keeps the same states and transitions (<see cref="ConfLexState"/>),
/// written anew. Differences are deliberate and few: positions are 1-based line:column of the offending character,
/// comments produce no tokens, <c>\xHH</c> bytes are decoded as UTF-8, and a <c>( ... )</c> block closed at end of
/// input or before <c>\r\n</c> does not keep its <c>)</c>. Go's lexer reads <c>'\0'</c> as end of input wherever it
/// compares with EOF; so do we.</para>
/// <para>This class wires the collaborators and runs the machine: the <see cref="ConfCursor"/> (position in the
/// text), the <see cref="ConfTokenEmitter"/> (the token handed out next), the <see cref="ConfStateStack"/> (what
/// follows a value), and one lexer per part of the language, each owning its states: the document level
/// (<see cref="ConfDocumentLexer"/>), keys and includes (<see cref="ConfKeyLexer"/>), arrays and maps
/// (<see cref="ConfCollectionLexer"/>), strings and escapes (<see cref="ConfStringLexer"/>), numbers
/// (<see cref="ConfNumberLexer"/>). Where a value starts, and so which of them reads it, is decided here.</para>
/// </remarks>
internal sealed class ConfLexer
{
    private readonly ConfCursor cursor;
    private readonly ConfTokenEmitter tokens;
    private readonly ConfDocumentLexer document;
    private readonly ConfKeyLexer keys;
    private readonly ConfCollectionLexer collections;
    private readonly ConfStringLexer strings;
    private readonly ConfNumberLexer numbers;
    private ConfLexState state;

    /// <summary>Creates a lexer over a whole document.</summary>
    /// <param name="input">The configuration text.</param>
    /// <param name="fileName">Name used in positions; empty for unnamed text.</param>
    public ConfLexer(string input, string fileName)
        : this(input, fileName, valueFirst: false)
    {
    }

    /// <summary>
    /// Creates a lexer; with <paramref name="valueFirst"/> the text starts with a value instead of a key,
    /// as nats-server reads an environment variable (it lexes <c>pk=</c> followed by the variable's text).
    /// </summary>
    public ConfLexer(string input, string fileName, bool valueFirst)
    {
        cursor = new ConfCursor(input, fileName);
        var parts = new ConfTextParts();
        tokens = new ConfTokenEmitter(cursor, parts);
        var stack = new ConfStateStack(cursor);
        document = new ConfDocumentLexer(cursor, tokens, stack);
        keys = new ConfKeyLexer(cursor, tokens, stack);
        collections = new ConfCollectionLexer(cursor, tokens, stack);
        strings = new ConfStringLexer(cursor, tokens, parts, stack);
        numbers = new ConfNumberLexer(cursor, tokens, stack);
        if (valueFirst)
        {
            stack.Push(ConfLexState.TopValueEnd);
            state = ConfLexState.Value;
        }
        else
        {
            state = ConfLexState.Top;
        }
    }

    /// <summary>Reads the next token; at the end it answers <see cref="ConfTokenKind.Eof"/> forever.</summary>
    /// <exception cref="ConfException">The text is not valid configuration syntax.</exception>
    public ConfToken Next()
    {
        ConfToken token;
        while (!tokens.TryTake(out token))
        {
            state = Step(state);
        }

        return token;
    }

    private ConfLexState Step(ConfLexState current) => current switch
    {
        ConfLexState.Top => document.Top(),
        ConfLexState.TopValueEnd => document.TopValueEnd(),
        ConfLexState.BlockStart => document.BlockStart(),
        ConfLexState.BlockValueEnd => document.BlockValueEnd(),
        ConfLexState.BlockEnd => document.BlockEnd(),
        ConfLexState.KeyStart => keys.KeyStart(),
        ConfLexState.QuotedKey => keys.QuotedKey('\''),
        ConfLexState.DubQuotedKey => keys.QuotedKey('"'),
        ConfLexState.Key => keys.Key(),
        ConfLexState.KeyEnd => keys.KeyEnd(),
        ConfLexState.IncludeStart => keys.IncludeStart(),
        ConfLexState.Include => keys.Include(),
        ConfLexState.IncludeQuoted => keys.IncludeQuoted('\'', "Unexpected EOF in quoted include"),
        ConfLexState.IncludeDubQuoted => keys.IncludeQuoted('"', "Unexpected EOF in double quoted include"),
        ConfLexState.IncludeString => keys.IncludeString(),
        ConfLexState.MapKeyStart => keys.MapKeyStart(),
        ConfLexState.MapQuotedKey => keys.MapQuotedKey('\'', "Unexpected EOF processing quoted map key."),
        ConfLexState.MapDubQuotedKey => keys.MapQuotedKey('"', "Unexpected EOF processing double quoted map key."),
        ConfLexState.MapKey => keys.MapKey(),
        ConfLexState.MapKeyEnd => keys.MapKeyEnd(),
        ConfLexState.Value => Value(),
        ConfLexState.ArrayValue => collections.ArrayValue(),
        ConfLexState.ArrayValueEnd => collections.ArrayValueEnd(),
        ConfLexState.MapValue => collections.MapValue(),
        ConfLexState.MapValueEnd => collections.MapValueEnd(),
        ConfLexState.QuotedString => strings.QuotedString(),
        ConfLexState.DubQuotedString => strings.DubQuotedString(),
        ConfLexState.String => strings.BareString(),
        ConfLexState.StringEscape => strings.Escape(),
        ConfLexState.StringBinary => strings.Binary(),
        ConfLexState.Block => strings.Block(),
        ConfLexState.NumberStart => numbers.NumberStart(),
        ConfLexState.Number => numbers.Number(),
        ConfLexState.ConvenientNumber => numbers.ConvenientNumber(),
        ConfLexState.DateAfterYear => numbers.DateAfterYear(),
        ConfLexState.NegNumberStart => numbers.NegNumberStart(),
        ConfLexState.NegNumber => numbers.NegNumber(),
        ConfLexState.FloatStart => numbers.FloatStart(),
        ConfLexState.Float => numbers.Float(),
        ConfLexState.IPAddr => numbers.IPAddr(),
        _ => throw cursor.Fail(cursor.Position, $"BUG in lexer: no state {current}."),
    };

    // Where any value starts (after a key, in an array, in a map): its first character picks the lexer that reads it.
    // Blanks may precede it, a new line may not: "foo =\n1" is an error although "foo\n1" is not, as in nats-server.
    private ConfLexState Value()
    {
        var c = cursor.Read();
        if (IsWhitespace(c))
        {
            cursor.Ignore();
            return ConfLexState.Value;
        }

        tokens.MarkOrigin(cursor.Last);
        switch (c)
        {
            case '[':
                cursor.Ignore();
                tokens.Emit(ConfTokenKind.ArrayStart);
                return ConfLexState.ArrayValue;
            case '{':
                cursor.Ignore();
                tokens.Emit(ConfTokenKind.MapStart);
                return ConfLexState.MapKeyStart;
            case '\'':
                cursor.Ignore();
                return ConfLexState.QuotedString;
            case '"':
                cursor.Ignore();
                return ConfLexState.DubQuotedString;
            case '-':
                return ConfLexState.NegNumberStart;
            case '(':
                cursor.Ignore();
                return ConfLexState.Block;
            case '.':
                throw cursor.Fail(cursor.Last, "Floats must start with a digit");
            case '\n' or '\r':
                throw cursor.Fail(cursor.Last, "Expected value but found new line");
        }

        cursor.Backup();
        return char.IsDigit(c) ? ConfLexState.NumberStart : ConfLexState.String;
    }
}
