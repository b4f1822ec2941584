using Broker.TestKit;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Tests.Conf.ConfTestKit;

namespace Broker.Host.Tests.Conf;

public sealed class ConfIncludeTests : IDisposable
{
    private const string AlicePass = "$2a$10$UHR6GhotWhpLsKtVP0/i6.Nh9.fuY73cWjLoJjb2sKT8KISBcUW5q";
    private const string BobPass = "$2a$11$dZM98SpGeI7dCFFGSpt.JObQcix8YHml4TBUZoge9R1uxnMIln5ly";

    private readonly TempDirectory dir = new("conf-tests-");

    public void Dispose() => dir.Dispose();

    private ConfMap ParseMain(string text)
    {
        var path = dir.Write("main.conf", text);
        return ConfParser.ParseFile(path, NoEnvironment);
    }

    private ConfException MainError(string text)
    {
        var path = dir.Write("main.conf", text);
        return Assert.Throws<ConfException>(() => ConfParser.ParseFile(path, NoEnvironment));
    }

    [Fact]
    public void Nats_server_simple_conf_with_nested_relative_includes()
    {
        // nats-server's conf/simple.conf and conf/includes/.
        dir.Write("includes/passwords.conf", $"# Just foo & bar for testing\nALICE_PASS: {AlicePass}\nBOB_PASS: {BobPass}\n");
        dir.Write("includes/users.conf", "# Users configuration\n\ninclude ./passwords.conf;\n\nusers = [\n  {user: alice, password: $ALICE_PASS}\n  {user: bob,   password: $BOB_PASS}\n]\n");
        var map = ParseMain("listen: 127.0.0.1:4222\n\nauthorization {\n  include 'includes/users.conf' # Pull in from file\n  timeout: 0.5\n}\n");
        Assert.Equal(
            $"{{listen: \"127.0.0.1:4222\", authorization: {{ALICE_PASS: \"{AlicePass}\", BOB_PASS: \"{BobPass}\", " +
            $"users: [{{user: \"alice\", password: \"{AlicePass}\"}}, {{user: \"bob\", password: \"{BobPass}\"}}], timeout: 0.5}}}}",
            Render(map));
        var auth = Map(map, "authorization");
        Assert.True(auth.TryGetEntry("ALICE_PASS", out var alice));
        Assert.True(alice.UsedAsVariable);
        Assert.Equal(new ConfPosition(Path.Combine(dir.Path, "includes", "passwords.conf"), 2, 1), alice.KeyPosition);
    }

    [Theory]
    [InlineData("include 'a.conf'")]
    [InlineData("include \"a.conf\"")]
    [InlineData("include a.conf")]
    [InlineData("include ./a.conf;")]
    [InlineData("INCLUDE a.conf")]
    [InlineData("include sub/../a.conf")]
    [InlineData("include /a.conf")]
    public void Include_forms(string line)
    {
        dir.Write("a.conf", "port = 4222\n");
        Assert.Equal(4222, Int(ParseMain(line + "\n"), "port"));
    }

    [Fact]
    public void Leading_separator_does_not_make_an_include_absolute()
    {
        // Go joins the including folder with the path as given, so "/x.conf" is "<folder>/x.conf".
        var elsewhere = dir.Write("elsewhere/x.conf", "port = 1\n");
        var ex = MainError($"include {elsewhere}\n");
        Assert.Contains(Path.Combine(dir.Path, elsewhere.TrimStart('/')), ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Included_keys_merge_in_place_and_later_assignments_win()
    {
        dir.Write("a.conf", "x = from_a\ny = from_a\n");
        var map = ParseMain("x = main\ninclude a.conf\ny = main\n");
        Assert.Equal("{x: \"from_a\", y: \"main\"}", Render(map));
    }

    [Fact]
    public void Includes_inside_maps_fill_that_map()
    {
        dir.Write("users.conf", "users = [ {user: a} ]\n");
        dir.Write("empty.conf", "");
        var map = ParseMain("accounts {\n  foo { include 'users.conf' }\n  bar { include users.conf }\n  quux { include 'empty.conf' }\n}\n");
        Assert.Equal("{accounts: {foo: {users: [{user: \"a\"}]}, bar: {users: [{user: \"a\"}]}, quux: {}}}", Render(map));
    }

    [Fact]
    public void Json_files_can_be_included()
    {
        dir.Write("foo.json", "{ \"users\": [ {\"user\": \"foo\"} ] }");
        dir.Write("bar.json", "{\n  \"users\": [ {\"user\": \"bar\"} ]\n}");
        dir.Write("quux.json", "{}");
        var map = ParseMain("accounts {\n  foo  { include 'foo.json'  }\n  bar  { include 'bar.json'  }\n  quux { include 'quux.json' }\n}\n");
        Assert.Equal("{accounts: {foo: {users: [{user: \"foo\"}]}, bar: {users: [{user: \"bar\"}]}, quux: {}}}", Render(map));
    }

    [Fact]
    public void Included_values_carry_the_included_file_name()
    {
        dir.Write("sub/inc.conf", "\n  port = 4222\n");
        var map = ParseMain("include sub/inc.conf\n");
        Assert.True(map.TryGetEntry("port", out var entry));
        var file = Path.Combine(dir.Path, "sub", "inc.conf");
        Assert.Equal(new ConfPosition(file, 2, 3), entry.KeyPosition);
        Assert.Equal(new ConfPosition(file, 2, 10), entry.Value.Position);
    }

    [Fact]
    public void Included_file_names_are_joined_like_the_including_file_name()
    {
        dir.Write("sub/inc.conf", "port = 1\n");
        var map = ConfParser.ParseText("include ./x/../sub/inc.conf", baseDirectory: dir.Path, environment: NoEnvironment);
        Assert.True(map.TryGetEntry("port", out var entry));
        Assert.Equal("sub/inc.conf:1:1", entry.KeyPosition.ToString());
        map = ConfParser.ParseText("include sub/inc.conf", "conf/main.conf", dir.Path, NoEnvironment);
        Assert.True(map.TryGetEntry("port", out entry));
        Assert.Equal("conf/sub/inc.conf:1:1", entry.KeyPosition.ToString());
    }

    [Fact]
    public void Included_file_does_not_see_the_including_files_keys()
    {
        dir.Write("a.conf", "b = $a\n");
        var ex = MainError("a = 1\ninclude a.conf\n");
        Assert.Equal(
            $"{dir.Path}/main.conf:2:1: error parsing include file 'a.conf', {dir.Path}/a.conf:1:5: variable reference for 'a' can not be found",
            ex.Message);
    }

    [Fact]
    public void Errors_in_included_files_name_both_places()
    {
        dir.Write("sub/bad.conf", "port = \n");
        var ex = MainError("debug = true\nauthorization {\n  include sub/bad.conf\n}\n");
        Assert.Equal(
            $"{dir.Path}/main.conf:3:3: error parsing include file 'sub/bad.conf', {dir.Path}/sub/bad.conf:1:8: Expected value but found new line",
            ex.Message);
        Assert.Equal(new ConfPosition($"{dir.Path}/main.conf", 3, 3), ex.Position);
        var inner = Assert.IsType<ConfException>(ex.InnerException);
        Assert.Equal(new ConfPosition($"{dir.Path}/sub/bad.conf", 1, 8), inner.Position);
    }

    [Fact]
    public void Missing_include_is_an_error_at_the_include()
    {
        var ex = MainError("port = 1\ninclude \"sub/nope.conf\"\n");
        Assert.Equal(
            $"{dir.Path}/main.conf:2:1: error parsing include file 'sub/nope.conf', error opening config file '{dir.Path}/sub/nope.conf': no such file or directory",
            ex.Message);
    }

    [Fact]
    public void Including_a_folder_is_an_error()
    {
        Directory.CreateDirectory(Path.Combine(dir.Path, "folder"));
        var ex = MainError("include folder\n");
        Assert.EndsWith("is a directory", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Include_cycles_are_errors()
    {
        dir.Write("a.conf", "include b.conf\n");
        dir.Write("b.conf", "x = 1\ninclude a.conf\n");
        var ex = MainError("include a.conf\n");
        Assert.Equal(
            $"{dir.Path}/main.conf:1:1: error parsing include file 'a.conf', {dir.Path}/a.conf:1:1: error parsing include file 'b.conf', " +
            $"{dir.Path}/b.conf:2:1: error parsing include file 'a.conf', include cycle: '{dir.Path}/a.conf' is already being parsed",
            ex.Message);
    }

    [Fact]
    public void File_including_itself_is_a_cycle()
    {
        var ex = MainError("include main.conf\n");
        Assert.Contains("include cycle", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Same_file_may_be_included_twice()
    {
        dir.Write("common.conf", "timeout = 2\n");
        var map = ParseMain("a { include common.conf }\nb { include common.conf }\n");
        Assert.Equal("{a: {timeout: 2}, b: {timeout: 2}}", Render(map));
    }

    [Fact]
    public void Keys_of_an_included_file_serve_as_variables_after_the_include()
    {
        dir.Write("vars.conf", "P = 4222\nUNUSED = 1\n");
        var map = ParseMain("include vars.conf\nport = $P\n");
        Assert.Equal(4222, Int(map, "port"));
        Assert.True(map.TryGetEntry("P", out var used));
        Assert.True(used.UsedAsVariable);
        Assert.True(map.TryGetEntry("UNUSED", out var unused));
        Assert.False(unused.UsedAsVariable);
    }

    [Fact]
    public void Empty_and_comment_only_included_files_add_nothing()
    {
        dir.Write("empty.conf", "");
        dir.Write("comments.conf", "\n  # just some comments,\n  # and no key values also ok.\n");
        Assert.Equal(1, ParseMain("include empty.conf\ninclude comments.conf\nx = 1\n").Count);
    }

    [Fact]
    public void Include_with_no_value_key_in_included_file_is_invalid()
    {
        dir.Write("bar.conf", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
        var ex = MainError("accounts {\n  bar { include 'bar.conf'}\n}\n");
        Assert.Equal(
            $"{dir.Path}/main.conf:2:9: error parsing include file 'bar.conf', {dir.Path}/bar.conf:1:1: config is invalid: key 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' has no value",
            ex.Message);
    }
}
