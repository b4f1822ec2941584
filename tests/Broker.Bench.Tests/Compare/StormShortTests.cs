using Broker.Compare.Soak;
using Broker.Compare.Storm;
using Xunit.Abstractions;

namespace Broker.Bench.Tests.Compare;

/// <summary>
/// The slow-consumer storm of issue 14 in short (a dozen stalled subscribers, a few seconds, our host only): the fast
/// subscribers lose nothing, and every stalled one, whatever its protocol, is closed as a slow consumer at max_pending
/// and counted in /varz. Throughput and memory are measured by the long run (docs/reliability.md), not asserted here.
/// </summary>
public sealed class StormShortTests(ITestOutputHelper output)
{
    [Fact(Timeout = 180_000)]
    public async Task Stalled_subscribers_are_cut_off_at_max_pending_and_the_fast_ones_lose_nothing()
    {
        var options = StormOptions.Parse(["--stalled", "12", "--seconds", "3", "--runs", "1", "--payload", "128", "--max-pending", "262144", "--server", "ours", "--no-write"]);
        using var log = new StringWriter();
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(2.5));

        var results = await Task.Run(() => StormRunner.Run(options, log, timeout.Token));
        output.WriteLine(log.ToString());

        var result = Assert.Single(results);
        Assert.Null(result.Error);
        Assert.True(result.Published > 10_000, $"only {result.Published} published");
        Assert.Equal(0, result.Lost);
        Assert.Equal(0, result.OutOfOrder);
        Assert.Equal(result.Published * result.FastSubscribers, result.Delivered);
        Assert.Equal(12, result.Stalled.Count);
        Assert.All(result.Stalled, s => Assert.True(s.CutOff, $"a stalled {s.Protocol} subscriber was not cut off"));
        Assert.Equal(12, result.SlowConsumers);
        Assert.Equal(12, result.CloseReasons.GetValueOrDefault("Slow Consumer (Pending Bytes)"));
    }

    [Fact]
    public void Storm_command_line_is_parsed()
    {
        var defaults = StormOptions.Parse([]);
        var given = StormOptions.Parse(["--stalled", "9", "--fast", "1", "--seconds", "2.5", "--payload", "64", "--max-pending", "1048576", "--runs", "2", "--server", "nats-server", "--no-write"]);

        Assert.Equal((100, 2, TimeSpan.FromSeconds(15), 256, 4L * 1024 * 1024, SoakTarget.Both, true), (defaults.Stalled, defaults.FastPerProtocol, defaults.Phase, defaults.Payload, defaults.MaxPending, defaults.Server, defaults.Write));
        Assert.Equal((9, 1, TimeSpan.FromSeconds(2.5), 64, 1024L * 1024, 2, SoakTarget.NatsServer, false), (given.Stalled, given.FastPerProtocol, given.Phase, given.Payload, given.MaxPending, given.Runs, given.Server, given.Write));
        Assert.Equal(3, defaults.Runs);
        Assert.Throws<ArgumentException>(() => StormOptions.Parse(["--payload", "8"]));
        Assert.Throws<ArgumentException>(() => StormOptions.Parse(["--fast", "0"]));
        Assert.Throws<ArgumentException>(() => StormOptions.Parse(["--server", "mosquitto"]));
    }

    [Fact]
    public void Both_servers_get_the_same_configuration()
    {
        var config = StormRunner.Config(new(4222, 1883, 8080, 8222, "/tmp/storm"), StormOptions.Parse(["--max-pending", "262144"]));

        Assert.Contains("max_pending: 262144", config, StringComparison.Ordinal);
        Assert.Contains("max_payload: 262144", config, StringComparison.Ordinal);
        Assert.Contains("mqtt { listen: \"127.0.0.1:1883\" }", config, StringComparison.Ordinal);
        Assert.Contains("websocket { listen: \"127.0.0.1:8080\", no_tls: true }", config, StringComparison.Ordinal);
    }
}
