using Broker.Host.Configuration.Conf;
using Broker.Host.Configuration.Conf.Internal;

namespace Broker.Host.Tests.Conf.Internal;

// The string lexer on its own, started in one of its states as the value lexer would start it (after the opening
// quote or parenthesis, at the first character of a bare word).
public class ConfStringLexerTests
{
    [Fact]
    public void Double_quotes_decode_escapes_and_end_at_the_quote()
    {
        var (token, next, position) = Lex("a\\tb\\\"c\\\\d\\ne\\rf\" rest", ConfLexState.DubQuotedString);

        Assert.Equal(new ConfToken(ConfTokenKind.String, "a\tb\"c\\d\ne\rf", new ConfPosition("", 1, 1)), token);
        Assert.Equal(ConfLexState.TopValueEnd, next);
        Assert.Equal(17, position); // after the closing quote
    }

    [Fact]
    public void Double_quotes_allow_new_lines()
    {
        Assert.Equal("a\nb", Lex("a\nb\"", ConfLexState.DubQuotedString).Token.Text);
    }

    [Fact]
    public void Hex_escapes_are_utf8_bytes()
    {
        Assert.Equal("caf\u00e9!", Lex("caf\\xc3\\xa9!\"", ConfLexState.DubQuotedString).Token.Text);
        Assert.Equal("\u00ff", Lex("\\xFF\"", ConfLexState.DubQuotedString).Token.Text);
    }

    [Fact]
    public void An_escape_returns_to_the_string_it_interrupted()
    {
        // In a bare word a '"' is text; in a double-quoted string it ends the string. After an escape each goes on
        // as it started.
        Assert.Equal("a\tb\"c", Lex("a\\tb\"c ", ConfLexState.String).Token.Text);
        Assert.Equal("a\tb", Lex("a\\tb\"c ", ConfLexState.DubQuotedString).Token.Text);
    }

    [Fact]
    public void Single_quotes_keep_backslashes()
    {
        var (token, _, position) = Lex("a\\tb' x", ConfLexState.QuotedString);

        Assert.Equal("a\\tb", token.Text);
        Assert.Equal(5, position);
    }

    [Theory]
    [InlineData("word rest", nameof(ConfTokenKind.String), "word")]
    [InlineData("word", nameof(ConfTokenKind.String), "word")]
    [InlineData("word,", nameof(ConfTokenKind.String), "word")]
    [InlineData("word]", nameof(ConfTokenKind.String), "word")]
    [InlineData("word}", nameof(ConfTokenKind.String), "word")]
    [InlineData("word;", nameof(ConfTokenKind.String), "word")]
    [InlineData("word\r\n", nameof(ConfTokenKind.String), "word")]
    [InlineData("true ", nameof(ConfTokenKind.Bool), "true")]
    [InlineData("Off\n", nameof(ConfTokenKind.Bool), "Off")]
    [InlineData("$name ", nameof(ConfTokenKind.Variable), "name")]
    [InlineData("$na\\tme ", nameof(ConfTokenKind.String), "$na\tme")]
    [InlineData("tr\\x75e ", nameof(ConfTokenKind.String), "true")]
    [InlineData("a\"b ", nameof(ConfTokenKind.String), "a\"b")]
    public void Bare_words_are_strings_booleans_or_variables(string text, string kind, string value)
    {
        var (token, next, _) = Lex(text, ConfLexState.String);

        Assert.Equal(Enum.Parse<ConfTokenKind>(kind), token.Kind);
        Assert.Equal(value, token.Text);
        Assert.Equal(ConfLexState.TopValueEnd, next);
    }

    [Fact]
    public void A_single_quote_ends_a_bare_word_and_is_dropped()
    {
        var (token, _, position) = Lex("ab'cd", ConfLexState.String);

        Assert.Equal("ab", token.Text);
        Assert.Equal(3, position);
    }

    [Theory]
    [InlineData("line\n)\nrest", "line\n")]
    [InlineData("a)\nb\n)", "a)\nb\n")]
    [InlineData("x\n)\r\nrest", "x\n")]
    [InlineData("\n)", "\n")]
    public void A_block_ends_at_a_parenthesis_alone_on_its_line(string text, string value)
    {
        Assert.Equal(value, Lex(text, ConfLexState.Block).Token.Text);
    }

    [Theory]
    [InlineData("a\\q\"", nameof(ConfLexState.DubQuotedString), "1:3: Invalid escape character 'q'. Only the following escape characters are allowed: \\xXX, \\t, \\n, \\r, \\\", \\\\.")]
    [InlineData("a\\\n\"", nameof(ConfLexState.String), "1:3: Invalid escape character '\\n'. Only the following escape characters are allowed: \\xXX, \\t, \\n, \\r, \\\", \\\\.")]
    [InlineData("\\x4", nameof(ConfLexState.DubQuotedString), "1:4: Expected two hexadecimal digits after '\\x', but hit end of file")]
    [InlineData("\\x", nameof(ConfLexState.DubQuotedString), "1:3: Expected two hexadecimal digits after '\\x', but hit end of file")]
    [InlineData("\\x4\n", nameof(ConfLexState.DubQuotedString), "1:4: Expected two hexadecimal digits after '\\x', but hit end of line")]
    [InlineData("ab\\xzz\"", nameof(ConfLexState.DubQuotedString), "1:5: Expected two hexadecimal digits after '\\x', but got 'zz'")]
    [InlineData("abc", nameof(ConfLexState.DubQuotedString), "1:4: Unexpected EOF.")]
    [InlineData("abc", nameof(ConfLexState.QuotedString), "1:4: Unexpected EOF.")]
    [InlineData("a\n)x", nameof(ConfLexState.Block), "2:3: Unexpected EOF processing block.")]
    public void Errors_name_the_offending_character(string text, string first, string message)
    {
        Assert.Equal(message, Assert.Throws<ConfException>(() => Lex(text, Enum.Parse<ConfLexState>(first))).Message);
    }

    [Theory]
    [InlineData(nameof(ConfLexState.DubQuotedString))]
    [InlineData(nameof(ConfLexState.QuotedString))]
    public void An_unopened_string_at_the_end_is_the_end(string first)
    {
        var (token, next, _) = Lex("", Enum.Parse<ConfLexState>(first));

        Assert.Equal(ConfTokenKind.Eof, token.Kind);
        Assert.Equal(ConfLexState.Done, next);
    }

    // Runs the string lexer from 'first' until it emits a token; what follows the string is TopValueEnd.
    private static (ConfToken Token, ConfLexState Next, int Position) Lex(string text, ConfLexState first)
    {
        var cursor = new ConfCursor(text, "");
        var parts = new ConfTextParts();
        var tokens = new ConfTokenEmitter(cursor, parts);
        var stack = new ConfStateStack(cursor);
        stack.Push(ConfLexState.TopValueEnd);
        var strings = new ConfStringLexer(cursor, tokens, parts, stack);
        tokens.MarkOrigin(0);
        var state = first;
        while (true)
        {
            state = state switch
            {
                ConfLexState.QuotedString => strings.QuotedString(),
                ConfLexState.DubQuotedString => strings.DubQuotedString(),
                ConfLexState.String => strings.BareString(),
                ConfLexState.StringEscape => strings.Escape(),
                ConfLexState.StringBinary => strings.Binary(),
                ConfLexState.Block => strings.Block(),
                _ => throw new InvalidOperationException($"the string lexer went on to {state} without a token"),
            };
            if (tokens.TryTake(out var token))
            {
                return (token, state, cursor.Position);
            }
        }
    }
}
