using System.Text;

namespace Broker.Host.Configuration.Conf;

/// <summary>
/// Splits nats-server configuration text into <see cref="ConfToken"/>s.
/// </summary>
/// <remarks>
/// nats-server's lexer (conf/lex.go) is a pushdown state machine whose quirks are part of the file
/// format users rely on: <c>foo 1</c> and <c>foo\n1</c> are assignments, <c>1k</c> is an integer but
/// <c>1kx</c> a string, a number directly followed by <c>]</c> swallows the bracket, a top-level key
/// starting with <c>/</c> is an "Unexpected EOF". To read every file the same way, this lexer keeps
/// the same states and transitions (one method per state, partial files by concern), written anew.
/// Differences are deliberate and few: positions are 1-based line:column of the offending character,
/// comments produce no tokens, <c>\xHH</c> bytes are decoded as UTF-8, and a <c>( ... )</c> block
/// closed at end of input or before <c>\r\n</c> does not keep its <c>)</c>.
/// Go's lexer reads <c>'\0'</c> as end of input wherever it compares with EOF; so do we.
/// </remarks>
internal sealed partial class ConfLexer
{
    // What Next() answers at the end of the input. A NUL in the input reads the same, as in Go.
    private const char Eof = '\0';

    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    private readonly string input;
    private readonly string fileName;
    private readonly List<int> lineStarts = [0];
    private readonly Stack<State> stack = new();
    private readonly StringBuilder parts = new();
    private List<byte>? pendingBytes;
    private bool hasParts;
    private State state;
    private State stringState = State.String;
    private int pos;     // index of the next character to read
    private int start;   // index where the text of the pending token starts
    private int width;   // 1 after reading a character, 0 after reading the end: what Backup() undoes
    private int origin;  // index where the pending token starts in the source, quotes and brackets included
    private ConfToken? pending;

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
        this.input = input;
        this.fileName = fileName;
        for (var i = 0; i < input.Length; i++)
        {
            if (input[i] == '\n')
            {
                lineStarts.Add(i + 1);
            }
        }
        if (valueFirst)
        {
            stack.Push(State.TopValueEnd);
            state = State.Value;
        }
        else
        {
            state = State.Top;
        }
    }

    /// <summary>Reads the next token; at the end it answers <see cref="ConfTokenKind.Eof"/> forever.</summary>
    /// <exception cref="ConfException">The text is not valid configuration syntax.</exception>
    public ConfToken Next()
    {
        while (pending is null)
        {
            state = Step(state);
        }
        var token = pending.Value;
        if (token.Kind != ConfTokenKind.Eof)
        {
            pending = null;
        }
        return token;
    }

    /// <summary>The 1-based line and column of a character index (or of the end of the input).</summary>
    public ConfPosition PositionOf(int index)
    {
        var line = lineStarts.BinarySearch(index);
        if (line < 0)
        {
            line = ~line - 1;
        }
        return new ConfPosition(fileName, line + 1, index - lineStarts[line] + 1);
    }

    private char Read()
    {
        if (pos >= input.Length)
        {
            width = 0;
            return Eof;
        }
        width = 1;
        return input[pos++];
    }

    private void Backup() => pos -= width;

    private char Peek() => pos < input.Length ? input[pos] : Eof;

    private void Ignore() => start = pos;

    // Index of the character Read() just returned, or of the end when it returned the end.
    private int Last => pos - width;

    private void Push(State next) => stack.Push(next);

    private State Pop() =>
        stack.TryPop(out var next) ? next : throw Fail(pos, "BUG in lexer: no states to pop.");

    private void Emit(ConfTokenKind kind)
    {
        pending = new ConfToken(kind, TakeText(), PositionOf(origin));
        start = pos;
    }

    private State EmitEof()
    {
        origin = pos;
        pending = new ConfToken(ConfTokenKind.Eof, string.Empty, PositionOf(pos));
        return State.Done;
    }

    // The text of the pending token: escaped parts collected so far plus the unread tail.
    private string TakeText()
    {
        if (!hasParts)
        {
            return input[start..pos];
        }
        FlushBytes();
        parts.Append(input, start, pos - start);
        var text = parts.ToString();
        parts.Clear();
        hasParts = false;
        return text;
    }

    // Keeps the text read so far, minus the trailing escape introducer, before an escape is decoded.
    private void AddCurrentPart(int dropLast)
    {
        var length = pos - dropLast - start;
        if (length > 0)
        {
            // Only text between escapes interrupts a run of \x bytes ("\xc3\xa9" is one character).
            FlushBytes();
            parts.Append(input, start, length);
        }
        hasParts = true;
        start = pos;
    }

    private State AddPart(char decoded)
    {
        FlushBytes();
        parts.Append(decoded);
        hasParts = true;
        start = pos;
        return stringState;
    }

    private State AddByte(byte value)
    {
        (pendingBytes ??= []).Add(value);
        hasParts = true;
        start = pos;
        return stringState;
    }

    // Go strings hold bytes, so "\xc3\xa9" is "é"; consecutive \x bytes are therefore decoded
    // together as UTF-8, and bytes that are not UTF-8 fall back to one character each (Latin-1).
    private void FlushBytes()
    {
        if (pendingBytes is not { Count: > 0 })
        {
            return;
        }
        var bytes = pendingBytes.ToArray();
        pendingBytes.Clear();
        try
        {
            parts.Append(StrictUtf8.GetString(bytes));
        }
        catch (DecoderFallbackException)
        {
            parts.Append(Encoding.Latin1.GetString(bytes));
        }
    }

    private ConfException Fail(int index, string message) => new(PositionOf(index), message);

    // How an offending character appears in a message; Go prints the character, "\n" escaped.
    private static string Describe(char c) => c switch
    {
        Eof => "EOF",
        '\n' => @"'\n'",
        '\r' => @"'\r'",
        '\t' => @"'\t'",
        _ => $"'{c}'",
    };

    // Go's unicode.IsSpace and .NET's char.IsWhiteSpace agree on every character.
    private static bool IsSpace(char c) => char.IsWhiteSpace(c);

    private static bool IsWhitespace(char c) => c is ' ' or '\t';

    private static bool IsNewLine(char c) => c is '\n' or '\r';

    private static bool IsKeySeparator(char c) => c is '=' or ':';
}
