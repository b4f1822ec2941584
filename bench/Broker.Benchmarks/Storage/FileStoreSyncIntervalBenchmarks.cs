using BenchmarkDotNet.Attributes;
using Broker.Storage.FileStore;

namespace Broker.Benchmarks.Storage;

/// <summary>
/// The file store under <c>sync_interval: 2m</c> (nats-server's policy): an append encodes its 128 B message into the
/// tail block's cache and writes it to the block file itself (one <c>pwrite</c>), after which it is durable under that
/// policy and its ack can leave at once; fsync runs on the interval.
/// </summary>
[MemoryDiagnoser]
public class FileStoreSyncIntervalBenchmarks
{
    private FileStoreBenchmarkStore bench = null!;

    [GlobalSetup]
    public void Setup() => bench = new FileStoreBenchmarkStore(new FileStoreOptions { SyncInterval = TimeSpan.FromMinutes(2) });

    [GlobalCleanup]
    public void Cleanup() => bench.Dispose();

    /// <summary>One 128 B append, written to the operating system before it returns (durable under the interval).</summary>
    [Benchmark]
    public long Append128Written() => bench.Append();
}
