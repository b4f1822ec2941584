using Broker.Host.Configuration.Conf;
using static Broker.Host.Tests.Conf.ConfTestKit;

namespace Broker.Host.Tests.Conf;

// Values and structure, after nats-server's conf/parse_test.go.
public class ConfSyntaxTests
{
    [Fact]
    public void Simple_top_level_values()
    {
        var map = Parse("foo='1'; bar=2.2; baz=true; boo=22");
        Assert.Equal("{foo: \"1\", bar: 2.2, baz: true, boo: 22}", Render(map));
    }

    [Theory]
    [InlineData("foo=true", true)]
    [InlineData("foo=TRUE", true)]
    [InlineData("foo=True", true)]
    [InlineData("foo=yes", true)]
    [InlineData("foo=YES", true)]
    [InlineData("foo=on", true)]
    [InlineData("foo=On", true)]
    [InlineData("foo=false", false)]
    [InlineData("foo=FALSE", false)]
    [InlineData("foo=no", false)]
    [InlineData("foo=No", false)]
    [InlineData("foo=off", false)]
    [InlineData("foo=OFF", false)]
    public void Booleans_in_any_letter_case(string text, bool expected)
    {
        Assert.Equal(expected, Bool(Parse(text), "foo"));
    }

    [Theory]
    [InlineData("foo = \"true\"")]
    [InlineData("foo = 'yes'")]
    [InlineData("foo = truely")]
    public void Quoted_or_longer_booleans_are_strings(string text)
    {
        Assert.IsType<ConfString>(Value(Parse(text), "foo"));
    }

    [Theory]
    [InlineData("port: 4222")]
    [InlineData("port = 4222")]
    [InlineData("port 4222")]
    [InlineData("port\t4222")]
    [InlineData("port:4222;")]
    [InlineData("port = 4222,")]
    [InlineData("port\n4222")]
    [InlineData("  port   =   4222   # comment")]
    [InlineData("port = 4222 // comment")]
    [InlineData("\"port\": 4222")]
    [InlineData("'port' 4222")]
    public void Key_value_separators(string text)
    {
        Assert.Equal(4222, Int(Parse(text), "port"));
    }

    [Fact]
    public void Nested_maps_and_arrays()
    {
        var map = Parse("\nfoo  {\n  host {\n    ip   = '127.0.0.1'\n    port = 4242\n  }\n  servers = [ \"a.com\", \"b.com\", \"c.com\"]\n}\n");
        Assert.Equal("{foo: {host: {ip: \"127.0.0.1\", port: 4242}, servers: [\"a.com\", \"b.com\", \"c.com\"]}}", Render(map));
    }

    [Fact]
    public void Cluster_sample_with_both_comment_styles()
    {
        const string Text = """
            cluster {
              port: 4244

              authorization {
                user: route_user
                password: top_secret
                timeout: 1
              }

              # Routes are actively solicited and connected to from this server.
              // Test both styles of comments

              routes = [
                nats-route://foo:bar@apcera.me:4245
                nats-route://foo:bar@apcera.me:4246
              ]
            }
            """;
        Assert.Equal(
            "{cluster: {port: 4244, authorization: {user: \"route_user\", password: \"top_secret\", timeout: 1}, " +
            "routes: [\"nats-route://foo:bar@apcera.me:4245\", \"nats-route://foo:bar@apcera.me:4246\"]}}",
            Render(Parse(Text)));
    }

    [Fact]
    public void Quoted_strings_span_lines_and_keep_parentheses()
    {
        var foo = Map(Parse("\nfoo  {\n  expr = '(true == \"false\")'\n  text = 'This is a multi-line\ntext block.'\n}\n"), "foo");
        Assert.Equal("(true == \"false\")", Str(foo, "expr"));
        Assert.Equal("This is a multi-line\ntext block.", Str(foo, "text"));
    }

    [Fact]
    public void Arrays_of_maps()
    {
        var map = Parse("\n  array [\n    { abc: 123 }\n    { xyz: \"word\" }\n  ]\n");
        Assert.Equal("{array: [{abc: 123}, {xyz: \"word\"}]}", Render(map));
    }

    [Fact]
    public void Mixed_and_nested_arrays()
    {
        var map = Parse("a = [1 , \"two\", 3.5, true, [x, y ], {k: v}, -4 ]\nempty = []\nempty2 = [\n]");
        Assert.Equal("{a: [1, \"two\", 3.5, true, [\"x\", \"y\"], {k: \"v\"}, -4], empty: [], empty2: []}", Render(map));
    }

    [Fact]
    public void Positive_integer_directly_before_closing_bracket_keeps_the_bracket()
    {
        // nats-server reads "[1, 2 ]" as integers but "[x, 2]" leaves the string "2]" and an open array.
        Assert.Equal("{a: [1, 2]}", Render(Parse("a = [1, 2 ]")));
        Assert.Equal("{a: [1, \"2]\"]}", Render(Parse("a = [1, 2]\n]")));
        Assert.Equal("{a: [-1, 1.5, \"1k\"]}", Render(Parse("a = [-1, 1.5, 1k]")));
    }

    [Fact]
    public void Datetimes_are_utc()
    {
        var map = Parse("\n  now = 2016-05-04T18:53:41Z\n  gmt = false\n\n");
        var now = Assert.IsType<ConfDateTime>(Value(map, "now")).Value;
        Assert.Equal(new DateTime(2016, 5, 4, 18, 53, 41, DateTimeKind.Utc), now);
        Assert.Equal(DateTimeKind.Utc, now.Kind);
        Assert.False(Bool(map, "gmt"));
    }

    [Fact]
    public void Block_strings_hold_raw_text()
    {
        const string Jwt = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiJ\\x\"quoted\" (paren)";
        var map = Parse($"resolver_preload {{\n  ACCOUNT: (\n{Jwt}\n)\n}}\n");
        Assert.Equal($"\n{Jwt}\n", Str(Map(map, "resolver_preload"), "ACCOUNT"));
    }

    [Fact]
    public void Block_strings_close_before_windows_line_ends()
    {
        Assert.Equal("\r\nabc\r\n", Str(Parse("k (\r\nabc\r\n)\r\nnext = 1\r\n"), "k"));
    }

    [Theory]
    [InlineData("{ listen: 0.0.0.0:4222 }")]
    [InlineData("{\n  listen: 0.0.0.0:4222\n }")]
    [InlineData("\n{\n  listen: 0.0.0.0:4222\n}\n# wibble\n")]
    [InlineData("\n{\n  {\n    listen: 0.0.0.0:4222 // random comment\n  }\n  # wibble1\n}\n# wibble2\n")]
    [InlineData("{\"listen\": \"0.0.0.0:4222\"}")]
    [InlineData("{\n  \"listen\": \"0.0.0.0:4222\",\n}\n")]
    public void Optional_top_level_braces(string text)
    {
        Assert.Equal("{listen: \"0.0.0.0:4222\"}", Render(Parse(text)));
    }

    [Fact]
    public void Json_documents()
    {
        const string Pretty = """
            {
              "http_port": 8227,
              "port": 4227,
              "write_deadline": "1h",
              "cluster": {
                "port": 6222,
                "routes": [
                  "nats://127.0.0.1:4222",
                  "nats://127.0.0.1:4223"
                ]
              }
            }
            """;
        const string Expected = "{http_port: 8227, port: 4227, write_deadline: \"1h\", cluster: {port: 6222, routes: [\"nats://127.0.0.1:4222\", \"nats://127.0.0.1:4223\"]}}";
        Assert.Equal(Expected, Render(Parse(Pretty)));
        Assert.Equal(Expected, Render(Parse(
            "{\"http_port\": 8227,\"port\": 4227,\"write_deadline\": \"1h\",\"cluster\": {\"port\": 6222,\"routes\": [\"nats://127.0.0.1:4222\",\"nats://127.0.0.1:4223\"]}}\n")));
    }

    [Fact]
    public void Json_with_trailing_commas_and_mixed_terminators()
    {
        const string Text = "{\n  \"jetstream\": {\n    \"store_dir\": \"/tmp/nats\"\n    \"max_mem\": 1000000,\n  },\n  \"port\": 4222,\n  \"server_name\": \"nats1\"\n}\n";
        Assert.Equal("{jetstream: {store_dir: \"/tmp/nats\", max_mem: 1000000}, port: 4222, server_name: \"nats1\"}", Render(Parse(Text)));
    }

    [Fact]
    public void Top_level_values_in_block_scope_with_comments()
    {
        const string Text = "\n{\n  \"debug\":              False\n  \"server_name\":        \"n1\"\n\n  # Profile port specification.\n  \"prof_port\":          8221\n}\n";
        Assert.Equal("{debug: false, server_name: \"n1\", prof_port: 8221}", Render(Parse(Text)));
    }

    [Theory]
    [InlineData("")]
    [InlineData("\n\n\n   ")]
    [InlineData("\n# just comments with no values\n# is still valid.\n")]
    [InlineData("{}")]
    [InlineData("\n{\n# comments in the body\n}\n")]
    public void Empty_documents_are_valid(string text)
    {
        Assert.Equal(0, Parse(text).Count);
    }

    [Fact]
    public void A_closing_brace_after_the_last_value_is_ignored()
    {
        // nats-server reads a stray trailing '}' as a key without value and lets it pass.
        Assert.Equal("{accounts: {users: [{}]}}", Render(Parse("\naccounts { users = [{}]}\n}\n")));
    }

    [Fact]
    public void Odd_but_accepted_forms_follow_nats_server()
    {
        // A value may be empty at the very end, a lone '/' after a value is skipped, and a map
        // key loses a leading '/'; nats-server does all of this.
        Assert.Equal("", Str(Parse("foo ="), "foo"));
        Assert.Equal(1, Int(Parse("foo = 1 / \nbar = 2"), "foo"));
        Assert.Equal(1, Int(Map(Parse("a { /b = 1 }"), "a"), "b"));
        Assert.Equal("a\"b\"", Str(Parse("foo = a\"b\""), "foo"));
    }

    [Fact]
    public void Terminators_end_bare_strings()
    {
        var map = Parse("a = x;b = y,c = z}\nd = w");
        Assert.Equal("{a: \"x\", b: \"y\", c: \"z\", d: \"w\"}", Render(map));
    }

    [Fact]
    public void Nesting_is_bounded_instead_of_overflowing_the_stack()
    {
        var value = Value(Parse("a = " + new string('[', 256) + new string(']', 256)), "a");
        for (var level = 1; level < 256; level++)
        {
            value = Assert.Single(Assert.IsType<ConfArray>(value).Items);
        }
        Assert.Empty(Assert.IsType<ConfArray>(value).Items);
        var ex = ParseError("a = " + new string('[', 100_000));
        Assert.Equal("test.conf:1:261: maps and arrays nest deeper than 256 levels", ex.Message);
        ex = ParseError("a " + string.Concat(Enumerable.Repeat("{b ", 300)));
        Assert.Equal("test.conf:1:771: maps and arrays nest deeper than 256 levels", ex.Message);
    }
}
