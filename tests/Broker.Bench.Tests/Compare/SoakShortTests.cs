using Broker.Compare.Report;
using Broker.Compare.Soak;
using Xunit.Abstractions;

namespace Broker.Bench.Tests.Compare;

/// <summary>
/// The soak of issue 14 in short (about 20 seconds of churn, a few hundred clients, our host only): every connect
/// succeeds, the steady subscribers lose nothing while clients come and go around them, and once every client has
/// closed the server's descriptors and threads are back near the idle baseline. The long run is scripts/soak.sh.
/// </summary>
public sealed class SoakShortTests(ITestOutputHelper output)
{
    // Descriptors and threads the server may still hold after every client closed: a few sockets whose close is
    // still in flight, and thread-pool threads that retire on their own schedule (not a leak per connection: the
    // run opens thousands).
    private const int FileDescriptorSlack = 8;
    private const int ThreadSlack = 8;

    [Fact(Timeout = 180_000)]
    public async Task Churning_clients_lose_no_message_and_return_descriptors_and_threads()
    {
        var options = SoakOptions.Parse(["--minutes", "0.33", "--nats", "150", "--mqtt", "150", "--churn", "100", "--rate", "500", "--server", "ours", "--no-write"]);
        using var log = new StringWriter();
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(2.5));

        var results = await Task.Run(() => SoakRunner.Run(options, log, timeout.Token));
        output.WriteLine(log.ToString());

        var result = Assert.Single(results);
        Assert.Null(result.Error);
        Assert.Equal(0, result.ConnectFailures);
        Assert.True(result.Connects >= 300 + 1_000, $"only {result.Connects} connects");
        Assert.True(result.Published > 5_000, $"only {result.Published} published");
        Assert.Equal(0, result.Lost);
        Assert.Equal(result.Published * 2 * options.SteadySubscribers, result.Delivered);
        Assert.NotNull(result.Baseline);
        Assert.NotNull(result.Closed);
        Assert.True(result.PeakFileDescriptors >= result.Baseline.FileDescriptors + 300, "the clients never showed up as descriptors");
        // Assemblies first loaded during the run keep their files open (plugins load some on first use): not a leak.
        Assert.InRange(result.Closed.FileDescriptors - result.AssemblyDescriptors, 0, result.Baseline.FileDescriptors + FileDescriptorSlack);
        Assert.InRange(result.Closed.Threads, 0, result.Baseline.Threads + ThreadSlack);
    }

    [Fact]
    public void Soak_command_line_is_parsed()
    {
        var defaults = SoakOptions.Parse([]);
        var given = SoakOptions.Parse(["--minutes", "2.5", "--nats", "20", "--mqtt", "0", "--churn", "50", "--server", "nats-server", "--no-write"]);

        Assert.Equal((TimeSpan.FromMinutes(10), 10_000, 10_000, SoakTarget.Both, true), (defaults.Duration, defaults.Nats, defaults.Mqtt, defaults.Server, defaults.Write));
        Assert.Equal(TimeSpan.FromMinutes(1), defaults.WarmUp);
        Assert.Equal((TimeSpan.FromMinutes(2.5), 20, 0, 50, SoakTarget.NatsServer, false), (given.Duration, given.Nats, given.Mqtt, given.Churn, given.Server, given.Write));
        Assert.False(defaults.Accounts);
        Assert.True(SoakOptions.Parse(["--accounts"]).Accounts);
        Assert.Throws<ArgumentException>(() => SoakOptions.Parse(["--server", "mosquitto"]));
        Assert.Throws<ArgumentException>(() => SoakOptions.Parse(["--minutes", "0"]));
    }

    [Fact]
    public void Soak_section_replaces_only_its_own_section()
    {
        var path = Path.GetTempFileName();
        try
        {
            File.WriteAllText(path, "# Reliability\n\n## Fuzzing\n\nfuzz figures\n\n## Soak\n\nold soak\n\n## Permissions\n\nperm table\n");

            ReliabilityDoc.WriteSection(path, "## Soak\n\nnew soak\n");

            Assert.Equal("# Reliability\n\n## Fuzzing\n\nfuzz figures\n\n## Soak\n\nnew soak\n\n## Permissions\n\nperm table\n", File.ReadAllText(path));
        }
        finally
        {
            File.Delete(path);
        }
    }
}
