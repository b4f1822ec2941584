namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>The character classes of nats-server's lexer and how it names a character in messages.</summary>
internal static class ConfChars
{
    /// <summary>What a read answers at the end of the input. A NUL in the input reads the same, as in Go.</summary>
    public const char Eof = '\0';

    /// <summary>How an offending character appears in a message; Go prints the character, <c>"\n"</c> escaped.</summary>
    public static string Describe(char c) => c switch
    {
        Eof => "EOF",
        '\n' => @"'\n'",
        '\r' => @"'\r'",
        '\t' => @"'\t'",
        _ => $"'{c}'",
    };

    /// <summary>Go's <c>unicode.IsSpace</c>; .NET's <see cref="char.IsWhiteSpace(char)"/> agrees on every character.</summary>
    public static bool IsSpace(char c) => char.IsWhiteSpace(c);

    /// <summary>A blank within a line.</summary>
    public static bool IsWhitespace(char c) => c is ' ' or '\t';

    /// <summary>A line end.</summary>
    public static bool IsNewLine(char c) => c is '\n' or '\r';

    /// <summary>What may separate a key from its value besides blanks.</summary>
    public static bool IsKeySeparator(char c) => c is '=' or ':';
}
