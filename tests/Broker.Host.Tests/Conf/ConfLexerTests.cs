using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.Conf.ConfTokenKind;
using static Broker.Host.Tests.Conf.ConfTestKit;

namespace Broker.Host.Tests.Conf;

// Token-level behaviour, after nats-server's conf/lex_test.go (positions are ours: 1-based,
// at the first character of the token, quotes and brackets included).
public class ConfLexerTests
{
    [Fact]
    public void Key_alone_is_a_key()
    {
        Assert.Equal([(Key, "foo", 1, 1)], Lex("foo"));
    }

    [Theory]
    [InlineData("foo = \"bar\"", 7)]
    [InlineData("foo = 'bar'", 7)]
    [InlineData("foo='bar'", 5)]
    [InlineData("foo='bar'\r\n", 5)]
    [InlineData("foo=\t'bar'\t", 6)]
    public void Quoted_string_values(string text, int column)
    {
        Assert.Equal([(Key, "foo", 1, 1), (ConfTokenKind.String, "bar", 1, column)], Lex(text));
    }

    [Fact]
    public void Single_quotes_keep_backslashes()
    {
        Assert.Equal([(Key, "foo", 1, 1), (ConfTokenKind.String, @"bar\r\n  \t", 1, 7)], Lex(@"foo = 'bar\r\n  \t'"));
    }

    [Theory]
    [InlineData("foo = 3xyz")]
    [InlineData("foo = 3xyz,")]
    [InlineData("foo = 3xyz;")]
    public void Word_starting_with_a_digit_is_a_string(string text)
    {
        Assert.Equal([(Key, "foo", 1, 1), (ConfTokenKind.String, "3xyz", 1, 7)], Lex(text));
    }

    [Fact]
    public void Word_starting_with_a_digit_inside_maps()
    {
        Assert.Equal(
            [(Key, "map", 2, 9), (MapStart, "", 2, 13), (Key, "foo", 3, 11), (ConfTokenKind.String, "3xyz", 3, 17), (MapEnd, "", 3, 21)],
            Lex("\n        map {\n          foo = 3xyz}\n        "));
        Assert.Equal(
            [(Key, "map", 2, 9), (MapStart, "", 2, 13), (Key, "foo", 3, 11), (ConfTokenKind.String, "3xyz", 3, 17),
             (Key, "bar", 4, 11), (ConfTokenKind.String, "4wqs", 4, 17), (MapEnd, "", 5, 9)],
            Lex("\n        map {\n          foo = 3xyz,\n          bar = 4wqs\n        }\n        "));
    }

    [Theory]
    [InlineData("foo = 123", "123", 7)]
    [InlineData("foo=123", "123", 5)]
    [InlineData("foo=123\r\n", "123", 5)]
    [InlineData("foo = -123", "-123", 7)]
    [InlineData("foo=-123\r\n", "-123", 5)]
    public void Integers(string text, string value, int column)
    {
        Assert.Equal([(Key, "foo", 1, 1), (Integer, value, 1, column)], Lex(text));
    }

    [Theory]
    [InlineData("1k")]
    [InlineData("1K")]
    [InlineData("1m")]
    [InlineData("1M")]
    [InlineData("1g")]
    [InlineData("1G")]
    [InlineData("1MB")]
    [InlineData("1Gb")]
    [InlineData("1KiB")]
    [InlineData("-1m")]
    [InlineData("-1GB")]
    public void Integers_with_size_suffixes(string value)
    {
        Assert.Equal([(Key, "foo", 1, 1), (Integer, value, 1, 7)], Lex($"foo = {value} "));
    }

    [Theory]
    [InlineData("foo = 1Ghz", "1Ghz")]
    [InlineData("foo = 2Pie", "2Pie")]
    [InlineData("foo = 3Mbs,", "3Mbs")]
    public void Size_suffix_followed_by_letters_is_a_string(string text, string value)
    {
        Assert.Equal([(Key, "foo", 1, 1), (ConfTokenKind.String, value, 1, 7)], Lex(text));
    }

    [Fact]
    public void Sizes_and_strings_on_one_line()
    {
        Assert.Equal(
            [(Key, "foo", 1, 1), (Integer, "4Gb", 1, 7), (Key, "bar", 1, 12), (ConfTokenKind.String, "5Gø", 1, 18)],
            Lex("foo = 4Gb, bar = 5Gø"));
    }

    [Theory]
    [InlineData("foo = 22.2", 7)]
    [InlineData("foo=22.2", 5)]
    [InlineData("foo=22.2\r\n", 5)]
    public void Floats(string text, int column)
    {
        Assert.Equal([(Key, "foo", 1, 1), (ConfTokenKind.Float, "22.2", 1, column)], Lex(text));
    }

    [Theory]
    [InlineData("foo = true", "true", 7)]
    [InlineData("foo=true\r\n", "true", 5)]
    [InlineData("foo = FALSE", "FALSE", 7)]
    [InlineData("foo = Yes", "Yes", 7)]
    [InlineData("foo = off;", "off", 7)]
    public void Booleans_keep_their_text(string text, string value, int column)
    {
        Assert.Equal([(Key, "foo", 1, 1), (ConfTokenKind.Bool, value, 1, column)], Lex(text));
    }

    [Theory]
    [InlineData("# This is a comment")]
    [InlineData("# This is a comment\r\n")]
    [InlineData("// This is a comment\r\n")]
    [InlineData("\n  # one\n// two\n")]
    public void Comments_produce_no_tokens(string text)
    {
        Assert.Empty(Lex(text));
    }

    [Theory]
    [InlineData("foo = 123 // This is a comment", 7)]
    [InlineData("foo=123    # This is a comment", 5)]
    public void Comments_after_values(string text, int column)
    {
        Assert.Equal([(Key, "foo", 1, 1), (Integer, "123", 1, column)], Lex(text));
    }

    [Theory]
    [InlineData("foo = bar")]
    [InlineData("foo = bar' ")]
    public void Bare_strings_end_at_a_single_quote(string text)
    {
        Assert.Equal([(Key, "foo", 1, 1), (ConfTokenKind.String, "bar", 1, 7)], Lex(text));
    }

    [Fact]
    public void Datetime()
    {
        Assert.Equal([(Key, "foo", 1, 1), (ConfTokenKind.DateTime, "2016-05-04T18:53:41Z", 1, 7)], Lex("foo = 2016-05-04T18:53:41Z"));
    }

    [Theory]
    [InlineData("foo = $bar", 7)]
    [InlineData("foo =$bar", 6)]
    [InlineData("foo $bar", 5)]
    public void Variables_name_without_dollar(string text, int column)
    {
        Assert.Equal([(Key, "foo", 1, 1), (Variable, "bar", 1, column)], Lex(text));
    }

    [Fact]
    public void Arrays_with_and_without_spaces()
    {
        Assert.Equal(
            [(Key, "foo", 1, 1), (ArrayStart, "", 1, 7), (Integer, "1", 1, 8), (Integer, "2", 1, 11), (Integer, "3", 1, 14),
             (ConfTokenKind.String, "bar", 1, 17), (ArrayEnd, "", 1, 22)],
            Lex("foo = [1, 2, 3, 'bar']"));
        Assert.Equal(
            [(Key, "foo", 1, 1), (ArrayStart, "", 1, 7), (Integer, "1", 1, 8), (Integer, "2", 1, 10), (Integer, "3", 1, 12),
             (ConfTokenKind.String, "bar", 1, 14), (ArrayEnd, "", 1, 19)],
            Lex("foo = [1,2,3,'bar']"));
    }

    [Fact]
    public void Multiline_arrays_with_comments_and_optional_commas()
    {
        const string Separated = "\n# top level comment\nfoo = [\n 1, # One\n 2, // Two\n 3 # Three\n 'bar'     ,\n \"bar\"\n]\n";
        const string Unseparated = "\n# top level comment\nfoo = [\n 1 // foo\n 2\n 3\n 'bar'\n \"bar\"\n]\n";
        (ConfTokenKind, string, int, int)[] expected =
        [
            (Key, "foo", 3, 1), (ArrayStart, "", 3, 7), (Integer, "1", 4, 2), (Integer, "2", 5, 2), (Integer, "3", 6, 2),
            (ConfTokenKind.String, "bar", 7, 2), (ConfTokenKind.String, "bar", 8, 2), (ArrayEnd, "", 9, 1),
        ];
        Assert.Equal(expected, Lex(Separated));
        Assert.Equal(expected, Lex(Unseparated));
    }

    [Fact]
    public void Maps_inline_multiline_and_nested()
    {
        Assert.Equal(
            [(Key, "foo", 1, 1), (MapStart, "", 1, 7), (Key, "ip", 1, 8), (ConfTokenKind.String, "127.0.0.1", 1, 11),
             (Key, "port", 1, 24), (Integer, "4242", 1, 31), (MapEnd, "", 1, 35)],
            Lex("foo = {ip='127.0.0.1', port = 4242}"));
        Assert.Equal(
            [(Key, "foo", 2, 1), (MapStart, "", 2, 7), (Key, "ip", 3, 3), (ConfTokenKind.String, "127.0.0.1", 3, 8),
             (Key, "port", 4, 3), (Integer, "4242", 4, 9), (MapEnd, "", 5, 1)],
            Lex("\nfoo = {\n  ip = '127.0.0.1' # the IP\n  port= 4242 // the port\n}\n"));
        Assert.Equal(
            [(Key, "foo", 2, 1), (MapStart, "", 2, 7), (Key, "host", 3, 3), (MapStart, "", 3, 10), (Key, "ip", 4, 5),
             (ConfTokenKind.String, "127.0.0.1", 4, 10), (Key, "port", 5, 5), (Integer, "4242", 5, 11), (MapEnd, "", 6, 3), (MapEnd, "", 7, 1)],
            Lex("\nfoo = {\n  host = {\n    ip = '127.0.0.1'\n    port= 4242\n  }\n}\n"));
    }

    [Fact]
    public void Maps_need_no_separator_after_their_key()
    {
        Assert.Equal(
            [(Key, "foo", 2, 1), (MapStart, "", 2, 6), (Key, "host", 3, 3), (MapStart, "", 3, 9), (Key, "ip", 4, 5),
             (ConfTokenKind.String, "127.0.0.1", 4, 10), (Key, "port", 5, 5), (Integer, "4242", 5, 11), (MapEnd, "", 6, 3), (MapEnd, "", 7, 1)],
            Lex("\nfoo  {\n  host  {\n    ip = '127.0.0.1'\n    port= 4242\n  }\n}\n"));
    }

    [Theory]
    [InlineData("foo : 123", "foo", 7)]
    [InlineData("'foo' : 123", "foo", 9)]
    [InlineData("\"foo\" : 123", "foo", 9)]
    [InlineData("' foo' : 123", " foo", 10)]
    [InlineData("\" foo\" : 123", " foo", 10)]
    [InlineData("foo:123", "foo", 5)]
    [InlineData("foo: 123", "foo", 6)]
    [InlineData("foo:  123\r\n", "foo", 7)]
    [InlineData("foo 123", "foo", 5)]
    [InlineData("foo\t123", "foo", 5)]
    [InlineData("foo\t\t123\r\n", "foo", 6)]
    [InlineData("foo\n123", "foo", 1)]
    public void Key_separators_and_quoted_keys(string text, string key, int valueColumn)
    {
        var tokens = Lex(text);
        Assert.Equal((Key, key, 1, 1), tokens[0]);
        Assert.Equal(Integer, tokens[1].Kind);
        Assert.Equal(valueColumn, tokens[1].Column);
    }

    [Fact]
    public void Escapes_in_bare_strings()
    {
        var tokens = Lex("\nfoo  = \\t\nbar  = \\r\nbaz  = \\n\nq    = \\\"\nbs   = \\\\\n");
        Assert.Equal(
            [(Key, "foo", 2, 1), (ConfTokenKind.String, "\t", 2, 8), (Key, "bar", 3, 1), (ConfTokenKind.String, "\r", 3, 8),
             (Key, "baz", 4, 1), (ConfTokenKind.String, "\n", 4, 8), (Key, "q", 5, 1), (ConfTokenKind.String, "\"", 5, 8),
             (Key, "bs", 6, 1), (ConfTokenKind.String, "\\", 6, 8)],
            tokens);
    }

    [Theory]
    [InlineData("foo = \"\\\\end\"", "\\end")]
    [InlineData("foo = \"start\\\\\"", "start\\")]
    [InlineData("foo = \\x45\\x71", "Eq")]
    [InlineData("foo = start\\x45\\x71", "startEq")]
    [InlineData("foo = start\\x7Cend", "start|end")]
    [InlineData("foo = \\x3c\\x3eend", "<>end")]
    [InlineData("foo = \\x3cmiddle\\x3E", "<middle>")]
    [InlineData("foo = \\x65", "e")]
    [InlineData("foo = \\xe9", "é")]
    [InlineData("foo = \"caf\\xc3\\xa9\"", "café")]
    [InlineData("foo = \\\\true", "\\true")]
    [InlineData("foo = \\\\$var", "\\$var")]
    [InlineData("foo = \"\"", "")]
    [InlineData("foo = ''", "")]
    [InlineData("foo = \"a\\tb\\nc\\rd\\\"e\"", "a\tb\nc\rd\"e")]
    public void Compound_and_escaped_strings(string text, string value)
    {
        Assert.Equal([(Key, "foo", 1, 1), (ConfTokenKind.String, value, 1, 7)], Lex(text));
    }

    [Fact]
    public void Semicolons_are_optional_terminators()
    {
        Assert.Equal(
            [(Key, "foo", 2, 1), (Integer, "123", 2, 7), (Key, "bar", 3, 1), (ConfTokenKind.String, "baz", 3, 7),
             (Key, "baz", 4, 1), (ConfTokenKind.String, "boo", 4, 7), (Key, "map", 5, 1), (MapStart, "", 5, 5),
             (Key, "id", 6, 2), (Integer, "1", 6, 7), (MapEnd, "", 7, 1)],
            Lex("\nfoo = 123;\nbar = 'baz';\nbaz = 'boo'\nmap {\n id = 1;\n}\n"));
        Assert.Equal(
            [(Key, "foo", 1, 1), (ConfTokenKind.String, "1", 1, 5), (Key, "bar", 1, 10), (ConfTokenKind.Float, "2.2", 1, 14),
             (Key, "baz", 1, 19), (ConfTokenKind.Bool, "true", 1, 23)],
            Lex("foo='1'; bar=2.2; baz=true;"));
    }

    [Fact]
    public void Unquoted_strings_booleans_and_quoted_booleans()
    {
        const string Text = "\nfoo = 123\nbar = baz\nbaz=boo\nmap {\n id:one\n id2 : onetwo\n}\nt true\nf false\ntstr \"true\"\ntkey = two\nfkey = five # This should be a string\n";
        Assert.Equal(
            [(Key, "foo", 2, 1), (Integer, "123", 2, 7), (Key, "bar", 3, 1), (ConfTokenKind.String, "baz", 3, 7),
             (Key, "baz", 4, 1), (ConfTokenKind.String, "boo", 4, 5), (Key, "map", 5, 1), (MapStart, "", 5, 5),
             (Key, "id", 6, 2), (ConfTokenKind.String, "one", 6, 5), (Key, "id2", 7, 2), (ConfTokenKind.String, "onetwo", 7, 8),
             (MapEnd, "", 8, 1), (Key, "t", 9, 1), (ConfTokenKind.Bool, "true", 9, 3), (Key, "f", 10, 1), (ConfTokenKind.Bool, "false", 10, 3),
             (Key, "tstr", 11, 1), (ConfTokenKind.String, "true", 11, 6), (Key, "tkey", 12, 1), (ConfTokenKind.String, "two", 12, 8),
             (Key, "fkey", 13, 1), (ConfTokenKind.String, "five", 13, 8)],
            Lex(Text));
    }

    [Fact]
    public void Quoted_map_keys_may_hold_special_characters()
    {
        Assert.Equal(
            [(Key, "foo", 1, 1), (MapStart, "", 1, 7), (Key, "bar", 1, 8), (Integer, "4242", 1, 16), (MapEnd, "", 1, 20)],
            Lex("foo = {'bar' = 4242}"));
        Assert.Equal(
            [(Key, "foo", 1, 1), (MapStart, "", 1, 7), (Key, "bar-1.2.3", 1, 8), (MapStart, "", 1, 22), (Key, "port", 1, 24),
             (Integer, "4242", 1, 29), (MapEnd, "", 1, 34), (MapEnd, "", 1, 35)],
            Lex("foo = {\"bar-1.2.3\" = { port:4242 }}"));
    }

    [Fact]
    public void Blocks_keep_raw_text_up_to_a_lone_closing_parenthesis()
    {
        Assert.Equal([(Key, "numbers", 2, 1), (ConfTokenKind.String, "\n1234567890\n", 2, 9)], Lex("\nnumbers (\n1234567890\n)\n"));
        Assert.Equal([(Key, "numbers", 2, 1), (ConfTokenKind.String, "\n1234567890\n", 2, 9)], Lex("\nnumbers (\n1234567890\n)"));
        Assert.Equal([(Key, "numbers", 2, 1), (ConfTokenKind.String, "\n1234567890\n", 2, 9)], Lex("\nnumbers (\n1234567890\n)\0"));
        Assert.Equal(
            [(Key, "numbers", 2, 1), (ConfTokenKind.String, "\n  12(34)56\n  (\n    7890\n  )\n", 2, 9)],
            Lex("\nnumbers (\n  12(34)56\n  (\n    7890\n  )\n)\n"));
    }

    [Theory]
    [InlineData("listen: 127.0.0.1:4222", "String", "127.0.0.1:4222", 9)]
    [InlineData("listen: 127.0.0.1", "String", "127.0.0.1", 9)]
    [InlineData("listen: apcera.me:80", "String", "apcera.me:80", 9)]
    [InlineData("listen: nats.io:-1", "String", "nats.io:-1", 9)]
    [InlineData("listen: -1", "Integer", "-1", 9)]
    [InlineData("listen: :-1", "String", ":-1", 9)]
    [InlineData("listen = :80", "String", ":80", 10)]
    [InlineData("listen = 4222", "Integer", "4222", 10)]
    [InlineData("listen = \"4222\"", "String", "4222", 10)]
    [InlineData("listen = 0.0.0.0:4222", "String", "0.0.0.0:4222", 10)]
    public void Addresses(string text, string kind, string value, int column)
    {
        Assert.Equal([(Key, "listen", 1, 1), (Enum.Parse<ConfTokenKind>(kind), value, 1, column)], Lex(text));
    }

    [Fact]
    public void Arrays_of_addresses()
    {
        Assert.Equal(
            [(Key, "listen", 1, 1), (ArrayStart, "", 1, 10), (ConfTokenKind.String, "localhost:4222", 1, 11),
             (ConfTokenKind.String, "localhost:4333", 1, 27), (ArrayEnd, "", 1, 41)],
            Lex("listen = [localhost:4222, localhost:4333]"));
    }

    [Fact]
    public void Arrays_of_maps()
    {
        const string Text = "\nauthorization {\n    users = [\n      {user: alice, password: foo}\n      {user: bob,   password: bar}\n    ]\n    timeout: 0.5\n}\n";
        Assert.Equal(
            [(Key, "authorization", 2, 1), (MapStart, "", 2, 15), (Key, "users", 3, 5), (ArrayStart, "", 3, 13),
             (MapStart, "", 4, 7), (Key, "user", 4, 8), (ConfTokenKind.String, "alice", 4, 14), (Key, "password", 4, 21), (ConfTokenKind.String, "foo", 4, 31), (MapEnd, "", 4, 34),
             (MapStart, "", 5, 7), (Key, "user", 5, 8), (ConfTokenKind.String, "bob", 5, 14), (Key, "password", 5, 21), (ConfTokenKind.String, "bar", 5, 31), (MapEnd, "", 5, 34),
             (ArrayEnd, "", 6, 5), (Key, "timeout", 7, 5), (ConfTokenKind.Float, "0.5", 7, 14), (MapEnd, "", 8, 1)],
            Lex(Text));
    }

    [Theory]
    [InlineData("include \"users.conf\"")]
    [InlineData("include 'users.conf'")]
    [InlineData("include users.conf")]
    [InlineData("INCLUDE users.conf")]
    [InlineData("  include   users.conf # comment")]
    public void Includes(string text)
    {
        var token = Assert.Single(Lex(text));
        Assert.Equal(Include, token.Kind);
        Assert.Equal("users.conf", token.Text);
        Assert.Equal(text.IndexOf('i', StringComparison.OrdinalIgnoreCase) + 1, token.Column);
    }

    [Theory]
    [InlineData("foo { include users.conf }", 26)]
    [InlineData("foo {include users.conf}", 24)]
    [InlineData("foo { include 'users.conf' }", 28)]
    [InlineData("foo { include \"users.conf\"}", 27)]
    public void Includes_inside_maps(string text, int mapEndColumn)
    {
        Assert.Equal(
            [(Key, "foo", 1, 1), (MapStart, "", 1, 5), (Include, "users.conf", 1, text.IndexOf("include", StringComparison.Ordinal) + 1), (MapEnd, "", 1, mapEndColumn)],
            Lex(text));
    }

    [Fact]
    public void Include_directly_followed_by_a_separator_is_an_ordinary_key()
    {
        Assert.Equal([(Key, "include", 1, 1), (ConfTokenKind.String, "x", 1, 10)], Lex("include: x"));
        Assert.Equal([(Key, "include", 1, 1), (ConfTokenKind.String, "x", 1, 9)], Lex("include=x"));
    }
}
