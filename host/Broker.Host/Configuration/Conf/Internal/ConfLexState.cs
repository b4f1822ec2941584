namespace Broker.Host.Configuration.Conf.Internal;

/// <summary>
/// The states of the configuration lexer, nats-server's state functions (conf/lex.go <c>lexTop</c>,
/// <c>lexKeyStart</c>, ...) as values. Each belongs to one of the sub-lexers; <see cref="ConfLexer"/> dispatches.
/// </summary>
internal enum ConfLexState
{
    /// <summary>The end was emitted; no state follows.</summary>
    Done,

    // ConfDocumentLexer: top level and optional top-level braces.
    Top,
    TopValueEnd,
    BlockStart,
    BlockValueEnd,
    BlockEnd,

    // ConfKeyLexer: keys of the document and of maps, and 'include'.
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
    MapKeyStart,
    MapQuotedKey,
    MapDubQuotedKey,
    MapKey,
    MapKeyEnd,

    // ConfLexer: where any value starts.
    Value,

    // ConfCollectionLexer: array elements and map values.
    ArrayValue,
    ArrayValueEnd,
    MapValue,
    MapValueEnd,

    // ConfStringLexer: quoted and bare strings, escapes, '( ... )' blocks.
    QuotedString,
    DubQuotedString,
    String,
    StringEscape,
    StringBinary,
    Block,

    // ConfNumberLexer: integers, sizes, floats, dates, addresses.
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
