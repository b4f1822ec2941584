using Broker.Benchmarks.Delivery;

namespace Broker.Bench.Tests.Budgets;

/// <summary>The stream-import fan-out benchmark really delivers through the import, so its 0 B/op budget means something.</summary>
public sealed class ImportBenchmarkTests
{
    [Fact]
    public void Publish_through_stream_import_delivers_every_message_under_the_prefix()
    {
        var benchmark = new FanOutBenchmarks { Subscribers = 4 };
        benchmark.Setup();
        try
        {
            var bytes = benchmark.PublishThroughStreamImport128();

            // MSG imp.bench.fanout 1 128\r\n + payload + \r\n, to each of the 4 importers, for each message of the batch.
            Assert.Equal(FanOutBenchmarks.Batch * 4 * ("MSG imp.bench.fanout 1 128\r\n".Length + 128 + 2), bytes);
        }
        finally
        {
            benchmark.Cleanup();
        }
    }
}
