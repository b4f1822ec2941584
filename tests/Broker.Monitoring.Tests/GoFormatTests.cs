using Broker.Core.Internal.Monitoring;

namespace Broker.Monitoring.Tests;

/// <summary>Go's text forms that appear in monitoring JSON: durations (rtt) and uptimes.</summary>
public sealed class GoFormatTests
{
    [Theory]
    [InlineData(0L, "0s")]
    [InlineData(100L, "100ns")]
    [InlineData(1_000L, "1µs")]
    [InlineData(345_000L, "345µs")]
    [InlineData(1_500L, "1.5µs")]
    [InlineData(8_020_500L, "8.0205ms")]
    [InlineData(1_000_000_000L, "1s")]
    [InlineData(1_500_000_000L, "1.5s")]
    [InlineData(120_000_000_000L, "2m0s")]
    [InlineData(3_723_500_000_000L, "1h2m3.5s")]
    [InlineData(36_000_000_000_000L, "10h0m0s")]
    public void Duration_matches_go(long nanoseconds, string expected)
        => Assert.Equal(expected, GoFormat.Duration(TimeSpan.FromTicks(nanoseconds / 100)));

    [Theory]
    [InlineData(0, "0s")]
    [InlineData(59, "59s")]
    [InlineData(61, "1m1s")]
    [InlineData(3600, "1h0m0s")]
    [InlineData(90061, "1d1h1m1s")]
    [InlineData((365 * 86400) + 61, "1y0d0h1m1s")]
    public void Uptime_matches_nats_server(int seconds, string expected)
        => Assert.Equal(expected, GoFormat.Uptime(TimeSpan.FromSeconds(seconds)));
}
