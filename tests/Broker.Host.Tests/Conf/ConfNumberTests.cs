using Broker.Host.Configuration.Conf;
using static Broker.Host.Tests.Conf.ConfTestKit;

namespace Broker.Host.Tests.Conf;

public class ConfNumberTests
{
    [Theory]
    [InlineData("0", 0L)]
    [InlineData("4222", 4222L)]
    [InlineData("-1", -1L)]
    [InlineData("9223372036854775807", long.MaxValue)]
    [InlineData("-9223372036854775808", long.MinValue)]
    [InlineData("8k", 8_000L)]
    [InlineData("8K", 8_000L)]
    [InlineData("4kb", 4_096L)]
    [InlineData("3ki", 3_072L)]
    [InlineData("4KiB", 4_096L)]
    [InlineData("1m", 1_000_000L)]
    [InlineData("1M", 1_000_000L)]
    [InlineData("1MB", 1_048_576L)]
    [InlineData("2Mi", 2_097_152L)]
    [InlineData("64MiB", 67_108_864L)]
    [InlineData("2g", 2_000_000_000L)]
    [InlineData("22GB", 22L * 1024 * 1024 * 1024)]
    [InlineData("22Gi", 22L * 1024 * 1024 * 1024)]
    [InlineData("1t", 1_000_000_000_000L)]
    [InlineData("22TB", 22L * 1024 * 1024 * 1024 * 1024)]
    [InlineData("22TiB", 22L * 1024 * 1024 * 1024 * 1024)]
    [InlineData("1p", 1_000_000_000_000_000L)]
    [InlineData("22PB", 22L * 1024 * 1024 * 1024 * 1024 * 1024)]
    [InlineData("1e", 1_000_000_000_000_000_000L)]
    [InlineData("1EB", 1L << 60)]
    [InlineData("7Ei", 7L << 60)]
    [InlineData("-1m", -1_000_000L)]
    [InlineData("-2GB", -2L * 1024 * 1024 * 1024)]
    public void Integers_and_size_suffixes(string literal, long expected)
    {
        Assert.Equal(expected, Int(Parse($"v = {literal}"), "v"));
    }

    [Theory]
    [InlineData("1Ghz")]
    [InlineData("2Pie")]
    [InlineData("3Mbs")]
    [InlineData("3xyz")]
    [InlineData("1:2")]
    [InlineData("10s")]
    [InlineData("1h30m")]
    public void Words_that_start_with_digits_are_strings(string literal)
    {
        Assert.Equal(literal, Str(Parse($"v = {literal}"), "v"));
    }

    [Theory]
    [InlineData("0.5", 0.5)]
    [InlineData("22.2", 22.2)]
    [InlineData("-1.25", -1.25)]
    [InlineData("1.000000000000000000001", 1.0)]
    public void Floats(string literal, double expected)
    {
        Assert.Equal(expected, Float(Parse($"v = {literal}"), "v"));
    }

    [Theory]
    [InlineData("listen: 127.0.0.1:4222", "127.0.0.1:4222")]
    [InlineData("listen: 127.0.0.1", "127.0.0.1")]
    [InlineData("listen: 0.0.0.0:-1", "0.0.0.0:-1")]
    [InlineData("listen: localhost:4222", "localhost:4222")]
    [InlineData("listen: :4222", ":4222")]
    [InlineData("listen: \"[::1]:4222\"", "[::1]:4222")]
    [InlineData("listen: '4222'", "4222")]
    public void Addresses_are_strings(string text, string expected)
    {
        Assert.Equal(expected, Str(Parse(text), "listen"));
    }

    [Fact]
    public void Quoted_numbers_stay_strings_and_sizes_in_quotes_are_not_converted()
    {
        var map = Parse("a = \"4222\"\nb = \"1MB\"\nc = 4222\nd = 1MB");
        Assert.Equal("4222", Str(map, "a"));
        Assert.Equal("1MB", Str(map, "b"));
        Assert.Equal(4222, Int(map, "c"));
        Assert.Equal(1_048_576, Int(map, "d"));
    }

    [Fact]
    public void Size_followed_by_a_digit_is_an_integer_then_an_error()
    {
        // "1e5" is not scientific notation: nats-server reads "1e" and then trips on "5".
        var ex = ParseError("v = 1e5");
        Assert.Equal("test.conf:1:7: Expected a top-level value to end with a new line, comment or EOF, but got '5' instead.", ex.Message);
    }

    [Fact]
    public void Address_with_trailing_letters_is_an_error()
    {
        var ex = ParseError("v = 1.2.3.4abc");
        Assert.Equal("test.conf:1:12: Expected a top-level value to end with a new line, comment or EOF, but got 'a' instead.", ex.Message);
    }

    [Fact]
    public void Values_keep_their_positions()
    {
        var map = Parse("a {\n  port: 4222\n  size = 1MB\n  ratio = 0.5\n  on = yes\n  at = 2016-05-04T18:53:41Z\n  list = [ 'x' ]\n}");
        var a = Map(map, "a");
        Assert.Equal(new ConfPosition("test.conf", 1, 3), a.Position);
        Assert.Equal(new ConfPosition("test.conf", 2, 9), Value(a, "port").Position);
        Assert.Equal(new ConfPosition("test.conf", 3, 10), Value(a, "size").Position);
        Assert.Equal(new ConfPosition("test.conf", 4, 11), Value(a, "ratio").Position);
        Assert.Equal(new ConfPosition("test.conf", 5, 8), Value(a, "on").Position);
        Assert.Equal(new ConfPosition("test.conf", 6, 8), Value(a, "at").Position);
        var list = Array(a, "list");
        Assert.Equal(new ConfPosition("test.conf", 7, 10), list.Position);
        Assert.Equal(new ConfPosition("test.conf", 7, 12), list.Items[0].Position);
        Assert.True(a.TryGetEntry("size", out var entry));
        Assert.Equal(new ConfPosition("test.conf", 3, 3), entry.KeyPosition);
    }
}
