using Broker.TestKit;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Tests.Conf.ConfTestKit;

namespace Broker.Host.Tests.Conf;

// Every error names file:line:column (1-based, at the offending character or the end of input)
// and keeps nats-server's wording. nats-server 2.9.10 reports the same line for all of these
// except "Expected value but found new line", which it counts on the next line.
public class ConfErrorTests
{
    [Theory]
    [InlineData("foo = .2", "1:7: Floats must start with a digit")]
    [InlineData("foo = -.2", "1:8: Floats must start with a digit, not '.'.")]
    [InlineData("foo = -x", "1:8: Expected a digit but got 'x'.")]
    [InlineData("foo = 1.x", "1:9: Floats must have a digit after the '.', but got 'x' instead.")]
    [InlineData(" :foo = 22", "1:2: Unexpected key separator ':'")]
    [InlineData("foo = xyz\\x\n", "1:12: Expected two hexadecimal digits after '\\x', but hit end of line")]
    [InlineData("foo = xyz\\xF\n", "1:13: Expected two hexadecimal digits after '\\x', but hit end of line")]
    [InlineData("foo = \"[\\x]\"", "1:11: Expected two hexadecimal digits after '\\x', but got ']\"'")]
    [InlineData("foo = \"[\\xe]\"", "1:11: Expected two hexadecimal digits after '\\x', but got 'e]'")]
    [InlineData("foo = \\y", "1:8: Invalid escape character 'y'. Only the following escape characters are allowed: \\xXX, \\t, \\n, \\r, \\\", \\\\.")]
    [InlineData("path = C:\\Users", "1:11: Invalid escape character 'U'. Only the following escape characters are allowed: \\xXX, \\t, \\n, \\r, \\\", \\\\.")]
    [InlineData("\nlisten: \"localhost:4242\n\nhttp: localhost:8222\n", "5:1: Unexpected EOF.")]
    [InlineData("\nlisten: 'localhost:4242\n\nhttp: localhost:8222\n", "5:1: Unexpected EOF.")]
    [InlineData("\nfoo = \"\nlisten: \"\n\nhttp: localhost:8222\n\n\"\n", "8:1: Unexpected EOF.")]
    [InlineData("\nlisten = 4222\n\ncluster = {\n\n  foo = bar\n\n", "8:1: Unexpected EOF processing map.")]
    [InlineData("\nlisten = 4222\n\nquote = (\n\n  foo = bar\n\n", "8:1: Unexpected EOF processing block.")]
    [InlineData("quote = (\nabc\n  )\n", "4:1: Unexpected EOF processing block.")]
    [InlineData("foo =\n 1", "1:6: Expected value but found new line")]
    [InlineData("a = { b = 1", "1:12: Expected a map value terminator \",\" or a map terminator \"}\", but got EOF instead.")]
    [InlineData("a = { b = 1 c = 2 }", "1:13: Expected a map value terminator \",\" or a map terminator \"}\", but got 'c' instead.")]
    [InlineData("a { b = , }", "1:9: Unexpected map value terminator \",\".")]
    [InlineData("a { = 1 }", "1:5: Unexpected key separator '='.")]
    [InlineData("a { ] }", "1:5: Unexpected array end ']' processing map.")]
    [InlineData("a {", "1:4: Unexpected EOF processing map.")]
    [InlineData("a { abc", "1:8: Unexpected EOF processing map key.")]
    [InlineData("a { 'abc", "1:9: Unexpected EOF processing quoted map key.")]
    [InlineData("a { \"abc", "1:9: Unexpected EOF processing double quoted map key.")]
    [InlineData("x = 2016-05-04T18:53", "1:21: Expected ':' in ISO8601 datetime, but found EOF instead.")]
    [InlineData("x = 2016-0a-04T18:53:41Z", "1:11: Expected digit in ISO8601 datetime, but found 'a' instead.")]
    [InlineData("x = 2016-05-04 18:53:41Z", "1:15: Expected 'T' in ISO8601 datetime, but found ' ' instead.")]
    [InlineData("x = 12-05", "1:7: All ISO8601 dates must be in full Zulu form.")]
    [InlineData("/x = 1", "1:1: Unexpected EOF.")]
    [InlineData("port = 4222 # c\n/ foo = 2", "2:1: Unexpected EOF.")]
    [InlineData("foo = [1]", "1:10: Expected an array value terminator \",\" or an array terminator \"]\", but got EOF instead.")]
    [InlineData("cluster { routes = [1, 2] }", "1:27: Expected an array value terminator \",\" or an array terminator \"]\", but got '}' instead.")]
    [InlineData("foo = [1,,2]", "1:10: Unexpected array value terminator ','.")]
    [InlineData("foo = [,1]", "1:8: Unexpected array value terminator ','.")]
    [InlineData("listen = [::1]:4222", "1:15: Expected a top-level value to end with a new line, comment or EOF, but got ':' instead.")]
    [InlineData("a = 1 b = 2", "1:7: Expected a top-level value to end with a new line, comment or EOF, but got 'b' instead.")]
    [InlineData("authorization{ timeout = 1 }", "1:24: Expected a top-level value to end with a new line, comment or EOF, but got '=' instead.")]
    [InlineData("{ a = 1 b }", "1:9: Expected a block-level value to end with a new line, comment or EOF, but got 'b' instead.")]
    [InlineData("{ { a = 1 } b }", "1:13: Expected a block-level to end with a '}', but got 'b' instead.")]
    [InlineData("include [x]", "1:9: Expected include value but found start of an array")]
    [InlineData("include {x}", "1:9: Expected include value but found start of a map")]
    [InlineData("include (x)", "1:9: Expected include value but found start of a block")]
    [InlineData("include 1.conf", "1:9: Expected include value but found start of a number")]
    [InlineData("include \\x", "1:9: Expected include value but found escape sequence")]
    [InlineData("include\nx.conf", "1:8: Expected include value but found new line")]
    [InlineData("include 'abc", "1:13: Unexpected EOF in quoted include")]
    [InlineData("include \"abc", "1:13: Unexpected EOF in double quoted include")]
    [InlineData("A@@Føøøø?˛ø:{øøøø˙˙", "1:20: Unexpected EOF processing map key.")]
    public void Syntax_errors(string text, string expected)
    {
        Assert.Equal("test.conf:" + expected, ParseError(text).Message);
    }

    [Theory]
    [InlineData("foo = $nope", "1:7: variable reference for 'nope' can not be found")]
    [InlineData("a { b = 1 }\nc = $b", "2:5: variable reference for 'b' can not be found")]
    [InlineData("port = 99999999999999999999", "1:8: integer '99999999999999999999' is out of the range")]
    [InlineData("size = 8eb", "1:8: integer '8eb' is out of the range")]
    [InlineData("size = -9223372036854775809", "1:8: integer '-9223372036854775809' is out of the range")]
    [InlineData("size = 1kbb", "1:8: integer '1kbb' has an unknown size suffix 'kbb'")]
    [InlineData("size = 1MiBi\n", "1:8: integer '1MiBi' has an unknown size suffix 'MiBi'")]
    [InlineData("when = 2016-13-04T18:53:41Z", "1:8: expected Zulu formatted DateTime, but got '2016-13-04T18:53:41Z'")]
    [InlineData("aaaa", "1:1: config is invalid: key 'aaaa' has no value")]
    [InlineData("     aaaa         ", "1:6: config is invalid: key 'aaaa' has no value")]
    [InlineData("\n  # comments\n  a,a,a,a\n  ", "3:3: config is invalid: key 'a,a,a,a' has no value")]
    [InlineData("a = 1\nb = '", "2:1: config is invalid: key 'b' has no value")]
    [InlineData("a { b }", "1:5: key 'b' has no value")]
    [InlineData("a { b = }", "1:5: key 'b' has no value")]
    [InlineData("a = [ '", "1:8: Unexpected EOF.")]
    public void Semantic_errors(string text, string expected)
    {
        Assert.Equal("test.conf:" + expected, ParseError(text).Message);
    }

    [Fact]
    public void Float_out_of_range()
    {
        var text = "a = 1" + new string('0', 400) + ".5";
        Assert.Equal($"test.conf:1:5: float '1{new string('0', 400)}.5' is out of the range", ParseError(text).Message);
    }

    [Fact]
    public void Exception_exposes_position_and_reason()
    {
        var ex = ParseError("a = 1\nb = $c");
        Assert.Equal(new ConfPosition("test.conf", 2, 5), ex.Position);
        Assert.Equal("variable reference for 'c' can not be found", ex.Reason);
    }

    [Fact]
    public void Text_without_a_file_name_has_no_file_in_positions()
    {
        var ex = Assert.Throws<ConfException>(() => ConfParser.ParseText("a = $b", environment: NoEnvironment));
        Assert.Equal("1:5: variable reference for 'b' can not be found", ex.Message);
    }

    [Fact]
    public void First_error_in_source_order_wins()
    {
        // The variable error on line 1 is met before the syntax error on line 2.
        Assert.Equal("test.conf:1:5: variable reference for 'x' can not be found", ParseError("a = $x\nb = .5").Message);
    }

    [Fact]
    public void Missing_file_has_no_position()
    {
        using var dir = new TempDirectory("conf-tests-");
        var path = Path.Combine(dir.Path, "nope.conf");
        var ex = Assert.Throws<ConfException>(() => ConfParser.ParseFile(path, NoEnvironment));
        Assert.Null(ex.Position);
        Assert.Equal($"error opening config file '{path}': no such file or directory", ex.Message);
    }
}
