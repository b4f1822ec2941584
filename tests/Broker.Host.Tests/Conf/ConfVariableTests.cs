using Broker.Host.Configuration.Conf;
using static Broker.Host.Tests.Conf.ConfTestKit;

namespace Broker.Host.Tests.Conf;

public class ConfVariableTests
{
    private static Func<string, string?> Env(params (string Name, string Value)[] variables) =>
        name => variables.FirstOrDefault(v => v.Name == name).Value;

    [Fact]
    public void Variable_takes_the_value_of_an_earlier_key()
    {
        var map = Parse("\n  index = 22\n  foo = $index\n");
        Assert.Equal(22, Int(map, "foo"));
    }

    [Fact]
    public void Innermost_scope_wins_and_scopes_close_with_their_map()
    {
        var map = Parse("\n  index = 22\n  nest {\n    index = 11\n    foo = $index\n  }\n  bar = $index\n");
        Assert.Equal("{index: 22, nest: {index: 11, foo: 11}, bar: 22}", Render(map));
    }

    [Fact]
    public void Variables_reach_through_arrays_to_enclosing_maps()
    {
        var map = Parse("pass = secret\nusers = [ {user: a, password: $pass}, $pass ]");
        Assert.Equal("[{user: \"a\", password: \"secret\"}, \"secret\"]", Render(Array(map, "users")));
    }

    [Fact]
    public void Variables_may_hold_maps_and_arrays()
    {
        var map = Parse("BAR_USERS = { users = [ {user = \"bar\"} ]}\naccounts {\n  QUUX = [ { user: quux } ]\n  bar = $BAR_USERS\n  quux = { users = $QUUX }\n}\nvery { nested { env { VAR = 'NESTED', quux = $VAR }}}");
        Assert.Equal("{users: [{user: \"bar\"}]}", Render(Map(Map(map, "accounts"), "bar")));
        Assert.Equal("{users: [{user: \"quux\"}]}", Render(Map(Map(map, "accounts"), "quux")));
        Assert.Equal("NESTED", Str(Map(Map(Map(map, "very"), "nested"), "env"), "quux"));
    }

    [Fact]
    public void Variable_lookup_is_case_sensitive()
    {
        Assert.Equal("test.conf:2:7: variable reference for 'Index' can not be found", ParseError("index = 1\nfoo = $Index").Message);
    }

    [Fact]
    public void Only_keys_defined_before_are_visible()
    {
        Assert.Equal("test.conf:1:7: variable reference for 'b' can not be found", ParseError("a = [ $b ]\nb = 1").Message);
        Assert.Equal("test.conf:1:9: variable reference for 'a' can not be found", ParseError("a { b = $a }").Message);
    }

    [Fact]
    public void Referenced_value_takes_the_position_of_the_reference()
    {
        var map = Parse("port = 4222\nmonitor {\n  port = $port\n}");
        var port = Value(Map(map, "monitor"), "port");
        Assert.Equal(new ConfPosition("test.conf", 3, 10), port.Position);
        Assert.Equal(new ConfPosition("test.conf", 1, 8), Value(map, "port").Position);
    }

    [Fact]
    public void Keys_used_as_variables_are_flagged()
    {
        var map = Parse("PASS = secret\nUNUSED = 1\nauthorization { TOKEN = t, token = $TOKEN, user = x, password = $PASS }");
        Assert.True(map.TryGetEntry("PASS", out var pass));
        Assert.True(pass.UsedAsVariable);
        Assert.True(map.TryGetEntry("UNUSED", out var unused));
        Assert.False(unused.UsedAsVariable);
        var auth = Map(map, "authorization");
        Assert.Equal(["TOKEN"], auth.Entries.Where(e => e.UsedAsVariable).Select(e => e.Key));
        Assert.True(map.TryGetEntry("authorization", out var authEntry));
        Assert.False(authEntry.UsedAsVariable);
    }

    [Fact]
    public void Environment_variable_text_is_parsed_as_a_value()
    {
        Assert.Equal(22, Int(Parse("foo = $NUM", Env(("NUM", "22"))), "foo"));
        Assert.Equal("xyz", Str(Parse("foo = $S", Env(("S", "xyz"))), "foo"));
        Assert.Equal("3xyz", Str(Parse("foo = $S", Env(("S", "3xyz"))), "foo"));
        Assert.Equal("3Gyz", Str(Parse("foo = $S", Env(("S", "3Gyz"))), "foo"));
        Assert.Equal("3xyz", Str(Parse("foo = $S", Env(("S", "'3xyz'"))), "foo"));
        Assert.Equal("4222", Str(Parse("foo = $S", Env(("S", "\"4222\""))), "foo"));
        Assert.Equal(1_048_576, Int(Parse("foo = $S", Env(("S", "1MB"))), "foo"));
        Assert.True(Bool(Parse("foo = $S", Env(("S", "yes"))), "foo"));
        Assert.Equal("", Str(Parse("foo = $S", Env(("S", ""))), "foo"));
        Assert.Equal("{a: 1, b: [\"x\"]}", Render(Value(Parse("foo = $S", Env(("S", "{a: 1, b: [x]}"))), "foo")));
    }

    [Fact]
    public void Config_keys_shadow_environment_variables()
    {
        Assert.Equal(1, Int(Parse("HOME = 1\nfoo = $HOME", Env(("HOME", "/root"))), "foo"));
    }

    [Fact]
    public void Environment_values_may_name_other_environment_variables_but_not_config_keys()
    {
        Assert.Equal(7, Int(Parse("foo = $A", Env(("A", "$B"), ("B", "7"))), "foo"));
        var ex = ParseError("key = 1\nfoo = $A", Env(("A", "$key")));
        Assert.Equal("test.conf:2:7: variable reference for 'A' could not be parsed: variable reference for 'key' can not be found", ex.Message);
    }

    [Fact]
    public void Environment_value_that_is_not_one_value_is_an_error()
    {
        var ex = ParseError("port = $P", Env(("P", "1 2")));
        Assert.Equal("test.conf:1:8: variable reference for 'P' could not be parsed: Expected a top-level value to end with a new line, comment or EOF, but got '2' instead.", ex.Message);
        Assert.IsType<ConfException>(ex.InnerException);
    }

    [Fact]
    public void Environment_reference_cycles_are_detected()
    {
        Assert.Equal(
            "test.conf:1:7: variable reference for 'A' could not be parsed: variable reference cycle for 'A'",
            ParseError("foo = $A", Env(("A", "$A"))).Message);
        Assert.Equal(
            "test.conf:1:7: variable reference for 'A' could not be parsed: variable reference for 'B' could not be parsed: variable reference cycle for 'A'",
            ParseError("foo = $A", Env(("A", "$B"), ("B", "$A"))).Message);
    }

    [Fact]
    public void Same_environment_variable_may_be_used_twice()
    {
        var map = Parse("a = $X\nb = [$X, $X]", Env(("X", "5")));
        Assert.Equal("{a: 5, b: [5, 5]}", Render(map));
    }

    [Fact]
    public void Environment_lookup_defaults_to_the_process_environment()
    {
        // Reads (never sets) a variable the test process already has, one with a plain word value.
        var (name, value) = Environment.GetEnvironmentVariables().Cast<System.Collections.DictionaryEntry>()
            .Select(e => ((string)e.Key, e.Value as string ?? ""))
            .First(e => e.Item1.All(c => char.IsAsciiLetterOrDigit(c) || c == '_') && e.Item2.Length > 0 && e.Item2.All(char.IsAsciiLetter)
                && e.Item2.ToLowerInvariant() is not ("true" or "false" or "yes" or "no" or "on" or "off"));
        Assert.Equal(value, Str(ConfParser.ParseText($"v = ${name}"), "v"));
    }

    [Theory]
    [InlineData("password: $2a$11$ooo", "$2a$11$ooo")]
    [InlineData("password: $2a$10$UHR6GhotWhpLsKtVP0/i6.Nh9.fuY73cWjLoJjb2sKT8KISBcUW5q", "$2a$10$UHR6GhotWhpLsKtVP0/i6.Nh9.fuY73cWjLoJjb2sKT8KISBcUW5q")]
    [InlineData("password: \"$2b$11$ooo\"", "$2b$11$ooo")]
    [InlineData("password: '$var'", "$var")]
    public void Bcrypt_hashes_and_quoted_dollars_are_not_variables(string text, string expected)
    {
        Assert.Equal(expected, Str(Parse(text), "password"));
    }

    [Fact]
    public void Only_the_2a_bcrypt_prefix_is_recognised_unquoted()
    {
        Assert.Equal("test.conf:1:11: variable reference for '2b$11$ooo' can not be found", ParseError("password: $2b$11$ooo").Message);
    }

    [Fact]
    public void Bcrypt_string_keeps_the_reference_position()
    {
        Assert.Equal(new ConfPosition("test.conf", 1, 11), Value(Parse("password: $2a$11$ooo"), "password").Position);
    }
}
