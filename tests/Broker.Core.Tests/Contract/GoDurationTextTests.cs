using Broker.Abstractions;

namespace Broker.Core.Tests.Contract;

/// <summary>Go's duration texts, which nats-server's error messages carry and JetStream's API reads.</summary>
public sealed class GoDurationTextTests
{
    [Theory]
    [InlineData(0L, "0s")]
    [InlineData(20L, "20ns")]
    [InlineData(1_500L, "1.5\u00b5s")]
    [InlineData(100_000_000L, "100ms")]
    [InlineData(1_250_000L, "1.25ms")]
    [InlineData(1_500_000_000L, "1.5s")]
    [InlineData(60_000_000_000L, "1m0s")]
    [InlineData(120_500_000_000L, "2m0.5s")]
    [InlineData(3_600_000_000_000L, "1h0m0s")]
    [InlineData(5_430_000_000_001L, "1h30m30.000000001s")]
    [InlineData(-2_000_000_000L, "-2s")]
    [InlineData(long.MinValue, "-2562047h47m16.854775808s")]
    public void Formats_as_go_does(long nanoseconds, string expected) =>
        Assert.Equal(expected, ConfigSyntax.FormatDuration(nanoseconds));

    [Theory]
    [InlineData("1.5s", 1_500_000_000L)]
    [InlineData("2m0.5s", 120_500_000_000L)]
    [InlineData("1h30m30.000000001s", 5_430_000_000_001L)]
    [InlineData("-3s", -3_000_000_000L)]
    [InlineData("0", 0L)]
    public void Parses_to_the_nanosecond_and_round_trips(string text, long expected)
    {
        Assert.True(ConfigSyntax.TryParseNanoseconds(text, out var nanoseconds, out var error), error);
        Assert.Equal(expected, nanoseconds);
        Assert.True(ConfigSyntax.TryParseNanoseconds(ConfigSyntax.FormatDuration(nanoseconds), out var again, out _));
        Assert.Equal(nanoseconds, again);
    }

    [Theory]
    [InlineData("5", "time: missing unit in duration \"5\"")]
    [InlineData("5d", "time: unknown unit \"d\" in duration \"5d\"")]
    [InlineData("", "time: invalid duration \"\"")]
    public void Refuses_with_gos_message(string text, string message)
    {
        Assert.False(ConfigSyntax.TryParseNanoseconds(text, out _, out var error));
        Assert.Equal(message, error);
    }
}
