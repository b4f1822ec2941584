namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>
/// Where the lexer is in the configuration text: the next character to read, the start of the pending token's text,
/// and the width of the last read (what <see cref="Backup"/> undoes), with the line table that turns an index into a
/// 1-based line and column.
/// </summary>
/// <remarks>
/// Like nats-server's lexer (conf/lex.go <c>next</c>, <c>backup</c>, <c>peek</c>, <c>ignore</c>), reading past the end
/// answers <see cref="ConfChars.Eof"/> with a width of 0, so backing up after the end stays at the end.
/// </remarks>
internal sealed class ConfCursor
{
    private readonly string input;
    private readonly string fileName;
    private readonly List<int> lineStarts = [0];
    private int pos;    // index of the next character to read
    private int start;  // index where the text of the pending token starts
    private int width;  // 1 after reading a character, 0 after reading the end: what Backup() undoes

    /// <summary>Creates a cursor at the start of <paramref name="input"/>.</summary>
    /// <param name="input">The configuration text.</param>
    /// <param name="fileName">Name used in positions; empty for unnamed text.</param>
    public ConfCursor(string input, string fileName)
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
    }

    /// <summary>Index of the next character to read.</summary>
    public int Position => pos;

    /// <summary>Index of the character <see cref="Read"/> just returned, or of the end when it returned the end.</summary>
    public int Last => pos - width;

    /// <summary>Whether the last <see cref="Read"/> hit the end of the input.</summary>
    public bool AtEnd => width == 0;

    /// <summary>Index where the pending text starts (the character after the last <see cref="Ignore"/>).</summary>
    public int PendingStart => start;

    /// <summary>Whether text has been read since the last <see cref="Ignore"/>.</summary>
    public bool HasPending => pos > start;

    /// <summary>How many characters have been read since the last <see cref="Ignore"/>.</summary>
    public int PendingLength => pos - start;

    /// <summary>The text read since the last <see cref="Ignore"/>.</summary>
    public string PendingText => input[start..pos];

    /// <summary>Reads the next character; at the end answers <see cref="ConfChars.Eof"/>.</summary>
    public char Read()
    {
        if (pos >= input.Length)
        {
            width = 0;
            return ConfChars.Eof;
        }

        width = 1;
        return input[pos++];
    }

    /// <summary>Undoes the last <see cref="Read"/> (nothing when it hit the end).</summary>
    public void Backup() => pos -= width;

    /// <summary>The next character without reading it.</summary>
    public char Peek() => pos < input.Length ? input[pos] : ConfChars.Eof;

    /// <summary>The character at <paramref name="index"/>, or <see cref="ConfChars.Eof"/> outside the input.</summary>
    public char At(int index) => index >= 0 && index < input.Length ? input[index] : ConfChars.Eof;

    /// <summary>Drops the text read so far from the pending token: it starts at the next character.</summary>
    public void Ignore() => start = pos;

    /// <summary>Drops the first character of the pending text (the <c>$</c> of a variable).</summary>
    public void IgnoreFirst() => start++;

    /// <summary>The pending text without its last <paramref name="dropLast"/> characters.</summary>
    public ReadOnlySpan<char> Pending(int dropLast = 0) => input.AsSpan(start, Math.Max(pos - dropLast - start, 0));

    /// <summary><paramref name="length"/> characters of the input from <paramref name="index"/>.</summary>
    public ReadOnlySpan<char> Slice(int index, int length) => input.AsSpan(index, length);

    /// <summary>
    /// Skips to the end of the line (a comment's text), leaving the <c>'\n'</c> or <c>'\r'</c> unread, and drops what
    /// was read.
    /// </summary>
    public void IgnoreRestOfLine()
    {
        while (Peek() is not ('\n' or '\r' or ConfChars.Eof))
        {
            pos++;
        }

        Ignore();
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

    /// <summary>A syntax error at a character index.</summary>
    public ConfException Fail(int index, string message) => new(PositionOf(index), message);
}
