using Broker.Host.Configuration.Conf;

namespace Broker.Host.Tests.Conf;

/// <summary>Helpers shared by the configuration parser tests.</summary>
internal static class ConfTestKit
{
    // No test reads the real environment: every parse gets an explicit (usually empty) lookup.
    public static readonly Func<string, string?> NoEnvironment = _ => null;

    public static ConfMap Parse(string text, Func<string, string?>? environment = null) =>
        ConfParser.ParseText(text, "test.conf", Path.GetTempPath(), environment ?? NoEnvironment);

    public static ConfException ParseError(string text, Func<string, string?>? environment = null) =>
        Assert.Throws<ConfException>(() => Parse(text, environment));

    public static ConfValue Value(ConfMap map, string key)
    {
        Assert.True(map.TryGet(key, out var value), $"missing key '{key}' in {map}");
        return value;
    }

    public static string Str(ConfMap map, string key) => Assert.IsType<ConfString>(Value(map, key)).Value;

    public static long Int(ConfMap map, string key) => Assert.IsType<ConfInteger>(Value(map, key)).Value;

    public static double Float(ConfMap map, string key) => Assert.IsType<ConfFloat>(Value(map, key)).Value;

    public static bool Bool(ConfMap map, string key) => Assert.IsType<ConfBool>(Value(map, key)).Value;

    public static ConfMap Map(ConfMap map, string key) => Assert.IsType<ConfMap>(Value(map, key));

    public static ConfArray Array(ConfMap map, string key) => Assert.IsType<ConfArray>(Value(map, key));

    public static (ConfTokenKind Kind, string Text, int Line, int Column)[] Lex(string text)
    {
        var lexer = new ConfLexer(text, string.Empty);
        var tokens = new List<(ConfTokenKind, string, int, int)>();
        while (true)
        {
            var token = lexer.Next();
            if (token.Kind == ConfTokenKind.Eof)
            {
                return [.. tokens];
            }
            tokens.Add((token.Kind, token.Text, token.Position.Line, token.Position.Column));
        }
    }

    /// <summary>Renders a value as compact text to compare whole trees in one assertion.</summary>
    public static string Render(ConfValue value) => value switch
    {
        ConfMap map => "{" + string.Join(", ", map.Entries.Select(e => $"{e.Key}: {Render(e.Value)}")) + "}",
        ConfArray array => "[" + string.Join(", ", array.Items.Select(Render)) + "]",
        ConfString s => "\"" + s.Value + "\"",
        _ => value.ToString()!,
    };
}
