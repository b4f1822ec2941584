namespace Broker.Host.Configuration.Conf;

/// <summary>What a <see cref="ConfToken"/> is. Comments produce no token.</summary>
internal enum ConfTokenKind
{
    /// <summary>End of input; the lexer keeps answering it.</summary>
    Eof,

    /// <summary>A key of the document or of a map.</summary>
    Key,

    /// <summary>Text (quoted, bare, block or IP address), escapes applied.</summary>
    String,

    /// <summary>An unquoted <c>true/false/yes/no/on/off</c>, any letter case; text as written.</summary>
    Bool,

    /// <summary>Digits with an optional sign and size suffix, as written (<c>-1</c>, <c>64MB</c>).</summary>
    Integer,

    /// <summary>Digits, a point, digits, with an optional sign.</summary>
    Float,

    /// <summary><c>YYYY-MM-DDTHH:MM:SSZ</c>.</summary>
    DateTime,

    /// <summary><c>[</c>.</summary>
    ArrayStart,

    /// <summary><c>]</c>.</summary>
    ArrayEnd,

    /// <summary><c>{</c> opening a map value.</summary>
    MapStart,

    /// <summary><c>}</c> closing a map value.</summary>
    MapEnd,

    /// <summary>An unquoted <c>$name</c>; the text is the name without <c>$</c>.</summary>
    Variable,

    /// <summary><c>include path</c>; the text is the path without quotes.</summary>
    Include,
}

/// <summary>One lexical item of a configuration: its kind, its text and where it starts.</summary>
/// <param name="Kind">What was read.</param>
/// <param name="Text">The text of the item, quotes removed and escapes applied.</param>
/// <param name="Position">Where the item starts (an opening quote, bracket or <c>$</c> included).</param>
internal readonly record struct ConfToken(ConfTokenKind Kind, string Text, ConfPosition Position);
