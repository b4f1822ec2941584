using Broker.Abstractions;

namespace Broker.Host.Tests.Conf;

// Go's time.ParseDuration as ConfigSyntax implements it for the host and plugins; cases from Go's own time package tests.
public class ConfDurationTests
{
    [Theory]
    [InlineData("0", 0L)]
    [InlineData("5s", 5_000_000_000L)]
    [InlineData("30s", 30_000_000_000L)]
    [InlineData("1478s", 1_478_000_000_000L)]
    [InlineData("-5s", -5_000_000_000L)]
    [InlineData("+5s", 5_000_000_000L)]
    [InlineData("-0", 0L)]
    [InlineData("+0", 0L)]
    [InlineData("5.0s", 5_000_000_000L)]
    [InlineData("5.6s", 5_600_000_000L)]
    [InlineData("5.s", 5_000_000_000L)]
    [InlineData(".5s", 500_000_000L)]
    [InlineData("1.0s", 1_000_000_000L)]
    [InlineData("1.00s", 1_000_000_000L)]
    [InlineData("1.004s", 1_004_000_000L)]
    [InlineData("1.0040s", 1_004_000_000L)]
    [InlineData("100.00100s", 100_001_000_000L)]
    [InlineData("10ns", 10L)]
    [InlineData("11us", 11_000L)]
    [InlineData("12µs", 12_000L)]
    [InlineData("12μs", 12_000L)]
    [InlineData("13ms", 13_000_000L)]
    [InlineData("500ms", 500_000_000L)]
    [InlineData("14s", 14_000_000_000L)]
    [InlineData("2m", 120_000_000_000L)]
    [InlineData("16h", 57_600_000_000_000L)]
    [InlineData("1h30m", 5_400_000_000_000L)]
    [InlineData("3h30m", 12_600_000_000_000L)]
    [InlineData("10.5s4m", 250_500_000_000L)]
    [InlineData("-2m3.4s", -123_400_000_000L)]
    [InlineData("1h2m3s4ms5us6ns", 3_723_004_005_006L)]
    [InlineData("39h9m14.425s", 140_954_425_000_000L)]
    [InlineData("52763797000ns", 52_763_797_000L)]
    [InlineData("0.3333333333333333333h", 1_200_000_000_000L)]
    [InlineData("9007199254740993ns", 9_007_199_254_740_993L)]
    [InlineData("9223372036854775807ns", long.MaxValue)]
    [InlineData("9223372036854775.807us", long.MaxValue)]
    [InlineData("9223372036s854ms775us807ns", long.MaxValue)]
    [InlineData("9223372036.854775807s", long.MaxValue)]
    [InlineData("-9223372036854775808ns", long.MinValue)]
    [InlineData("-9223372036.854775808s", long.MinValue)]
    [InlineData("-9223372036s854ms775us808ns", long.MinValue)]
    [InlineData("-2562047h47m16.854775808s", long.MinValue)]
    [InlineData("0.100000000000000000000h", 360_000_000_000L)]
    [InlineData("0.830103483285477580700h", 2_988_372_539_827L)]
    public void Valid_durations(string text, long nanoseconds)
    {
        Assert.True(ConfigSyntax.TryParseNanoseconds(text, out var value, out var error));
        Assert.Equal(nanoseconds, value);
        Assert.Null(error);
    }

    [Theory]
    [InlineData("", "time: invalid duration \"\"")]
    [InlineData("3", "time: missing unit in duration \"3\"")]
    [InlineData("-", "time: invalid duration \"-\"")]
    [InlineData("s", "time: invalid duration \"s\"")]
    [InlineData(".", "time: invalid duration \".\"")]
    [InlineData("-.", "time: invalid duration \"-.\"")]
    [InlineData(".s", "time: invalid duration \".s\"")]
    [InlineData("+.s", "time: invalid duration \"+.s\"")]
    [InlineData("1d", "time: unknown unit \"d\" in duration \"1d\"")]
    [InlineData("1hour", "time: unknown unit \"hour\" in duration \"1hour\"")]
    [InlineData("2 m", "time: unknown unit \" m\" in duration \"2 m\"")]
    [InlineData("1h-2m", "time: unknown unit \"h-\" in duration \"1h-2m\"")]
    [InlineData("9223372036854775808ns", "time: invalid duration \"9223372036854775808ns\"")]
    [InlineData("9223372036854775.808us", "time: invalid duration \"9223372036854775.808us\"")]
    [InlineData("9223372036854ms775us808ns", "time: invalid duration \"9223372036854ms775us808ns\"")]
    [InlineData("-9223372036854775809ns", "time: invalid duration \"-9223372036854775809ns\"")]
    [InlineData("9223372036854775810ns", "time: invalid duration \"9223372036854775810ns\"")]
    [InlineData("9223372036854776us", "time: invalid duration \"9223372036854776us\"")]
    [InlineData("3000000h", "time: invalid duration \"3000000h\"")]
    [InlineData("5µ", "time: unknown unit \"\\xc2\\xb5\" in duration \"5\\xc2\\xb5\"")]
    [InlineData("\"5s\"", "time: invalid duration \"\\\"5s\\\"\"")]
    [InlineData("\t5s", "time: invalid duration \"\\x095s\"")]
    public void Invalid_durations_give_gos_messages(string text, string message)
    {
        Assert.False(ConfigSyntax.TryParseNanoseconds(text, out _, out var error));
        Assert.Equal(message, error);
        Assert.False(ConfigSyntax.TryParseDuration(text, out _, out error));
        Assert.Equal(message, error);
    }

    [Theory]
    [InlineData("2m", 2 * 60 * TimeSpan.TicksPerSecond)]
    [InlineData("500ms", 500 * TimeSpan.TicksPerMillisecond)]
    [InlineData("1h30m", 90 * 60 * TimeSpan.TicksPerSecond)]
    [InlineData("1m30s", 90 * TimeSpan.TicksPerSecond)]
    [InlineData("1.5s", 15 * TimeSpan.TicksPerSecond / 10)]
    [InlineData("2us", 20L)]
    [InlineData("199ns", 1L)]
    [InlineData("-2us", -20L)]
    public void TimeSpan_forms_truncate_to_ticks(string text, long ticks)
    {
        Assert.True(ConfigSyntax.TryParseDuration(text, out var value, out var error));
        Assert.Null(error);
        Assert.Equal(TimeSpan.FromTicks(ticks), value);
    }

    [Fact]
    public void A_bare_number_is_not_a_go_duration()
    {
        Assert.False(ConfigSyntax.TryParseDuration("10", out _, out var error));
        Assert.Equal("time: missing unit in duration \"10\"", error);
    }
}
