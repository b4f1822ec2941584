using Broker.Abstractions;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Tests.Plugins;

/// <summary>
/// The contract's shared settings reader: nats-server's value syntax from any configuration source, and refusals that
/// name the full key.
/// </summary>
public sealed class ConfigurationValuesTests
{
    [Theory]
    [InlineData("1m30s", 90_000L)]
    [InlineData("500ms", 500L)]
    [InlineData("1h", 3_600_000L)]
    [InlineData("1.5s", 1_500L)]
    [InlineData("0", 0L)]
    [InlineData("2", 2_000L)]
    [InlineData("0.25", 250L)]
    [InlineData(" 10s ", 10_000L)]
    public void Durations_are_go_durations_or_seconds(string text, long milliseconds)
    {
        Assert.Equal(TimeSpan.FromMilliseconds(milliseconds), Section(("d", text)).GetDuration("d"));
    }

    [Fact]
    public void Microsecond_and_nanosecond_durations_keep_their_ticks()
    {
        Assert.Equal(TimeSpan.FromTicks(20), Section(("d", "2us")).GetDuration("d"));
        Assert.Equal(TimeSpan.FromTicks(20), Section(("d", "2µs")).GetDuration("d"));
        Assert.Equal(TimeSpan.FromTicks(3), Section(("d", "300ns")).GetDuration("d"));
    }

    [Theory]
    [InlineData("1MB", 1_048_576L)]
    [InlineData("64KB", 65_536L)]
    [InlineData("1k", 1_000L)]
    [InlineData("2GiB", 2_147_483_648L)]
    [InlineData("1048576", 1_048_576L)]
    [InlineData("-1", -1L)]
    public void Sizes_take_nats_server_suffixes(string text, long bytes)
    {
        Assert.Equal(bytes, Section(("s", text)).GetSize("s"));
    }

    [Theory]
    [InlineData("true", true)]
    [InlineData("YES", true)]
    [InlineData("on", true)]
    [InlineData("False", false)]
    [InlineData("no", false)]
    [InlineData("OFF", false)]
    public void Booleans_take_nats_server_words(string text, bool value)
    {
        Assert.Equal(value, Section(("b", text)).GetBool("b"));
    }

    [Fact]
    public void Missing_and_empty_values_are_not_set()
    {
        var section = Section(("empty", ""));

        Assert.Null(section.GetDuration("missing"));
        Assert.Null(section.GetSize("empty"));
        Assert.Equal(7, section.GetInt32("missing", 7));
        Assert.True(section.GetBool("empty", true));
        Assert.Equal(TimeSpan.FromSeconds(2), section.GetDuration("missing", TimeSpan.FromSeconds(2)));
        Assert.Empty(section.GetList("missing"));
    }

    [Theory]
    [InlineData("d", "5 parsecs", "Plugins:Test:d: time: unknown unit \" parsecs\" in duration \"5 parsecs\"")]
    [InlineData("s", "1Q", "Plugins:Test:s: integer '1Q' has an unknown size suffix 'Q'")]
    [InlineData("s", "lots", "Plugins:Test:s: expected integer, but got 'lots'")]
    [InlineData("b", "maybe", "Plugins:Test:b: expected boolean value, but got 'maybe'")]
    [InlineData("i", "3GB", "Plugins:Test:i: integer '3GB' is out of the range")]
    public void Bad_values_are_refused_naming_the_full_key(string key, string text, string message)
    {
        var section = Section((key, text));

        var error = Assert.Throws<PluginConfigurationException>(() => key switch
        {
            "d" => section.GetDuration(key)?.ToString(),
            "b" => section.GetBool(key)?.ToString(),
            "i" => section.GetInt32(key)?.ToString(),
            _ => section.GetSize(key)?.ToString(),
        });

        Assert.Equal(message, error.Message);
        Assert.Equal("Plugins:Test:" + key, error.Key);
        Assert.IsAssignableFrom<InvalidOperationException>(error);
    }

    [Fact]
    public void Lists_are_arrays_or_comma_separated()
    {
        var section = Section(("a:0", " x "), ("a:1", "y"), ("b", "x, y,,z"));

        Assert.Equal(["x", "y"], section.GetList("a"));
        Assert.Equal(["x", "y", "z"], section.GetList("b"));
    }

    [Fact]
    public void Unknown_keys_are_refused_in_any_letter_case_naming_the_key()
    {
        var section = Section(("Port", "1"), ("max_connections", "2"));
        section.RejectUnknownKeys("port", "MAX_CONNECTIONS");

        var error = Assert.Throws<PluginConfigurationException>(() => section.RejectUnknownKeys("port"));

        Assert.Equal("Plugins:Test: unknown field \"max_connections\"", error.Message);
        Assert.Equal("Plugins:Test:max_connections", error.Key);
    }

    [Fact]
    public void A_refusal_names_the_key_or_the_section()
    {
        var section = Section(("port", "70000"));

        Assert.Equal("Plugins:Test:port: 70000 is not a valid port number", section.Refuse("port", "70000 is not a valid port number").Message);
        Assert.Equal("Plugins:Test: missing 'cert_file'", section.Refuse(null, "missing 'cert_file'").Message);
        Assert.Equal("Plugins:Test:nested:key", section.KeyPath("nested:key"));
        Assert.Equal("port", new ConfigurationBuilder().Build().KeyPath("port"));
    }

    private static IConfigurationSection Section(params (string Key, string? Value)[] values) =>
        new ConfigurationBuilder()
            .AddInMemoryCollection(values.Select(v => new KeyValuePair<string, string?>("Plugins:Test:" + v.Key, v.Value)))
            .Build()
            .GetSection("Plugins:Test");
}
