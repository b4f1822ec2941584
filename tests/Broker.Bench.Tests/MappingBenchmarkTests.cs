using Broker.Benchmarks.Delivery;

namespace Broker.Bench.Tests;

/// <summary>The mapping benchmarks measure mapped publishes: only the destinations have subscribers, so output proves the mapping ran.</summary>
public sealed class MappingBenchmarkTests
{
    [Fact]
    public void Each_case_delivers_to_its_destination()
    {
        var benchmarks = new MappingBenchmarks();
        benchmarks.Setup();
        try
        {
            Assert.True(benchmarks.Literal128() > 0);
            Assert.True(benchmarks.Wildcard128() > 0);
            Assert.True(benchmarks.Partition128() > 0);
            Assert.True(benchmarks.Weighted128() > 0);
        }
        finally
        {
            benchmarks.Cleanup();
        }
    }
}
