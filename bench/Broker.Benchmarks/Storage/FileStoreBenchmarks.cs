using BenchmarkDotNet.Attributes;
using Broker.Storage.FileStore;

namespace Broker.Benchmarks.Storage;

/// <summary>
/// The file store's hot paths on a real directory: appending a 128 B message (encode into the tail block's cache,
/// checksum, state; the disk write and fsync run on the store's committer), appending a batch and waiting until it is
/// durable (group commit: one fdatasync for the batch), loading by sequence and the next message of a subject into a
/// reused message. Encryption and compression: <see cref="FileStoreCipherBenchmarks"/>.
/// </summary>
[MemoryDiagnoser]
public class FileStoreBenchmarks
{
    /// <summary>Appends per durable batch: what many publishers waiting at once look like to the store.</summary>
    public const int Batch = 256;

    /// <summary>Loads per invocation.</summary>
    public const int Loads = 64;

    private static readonly byte[] OtherSubject = "bench.orders.old"u8.ToArray();

    private FileStoreBenchmarkStore bench = null!;

    [GlobalSetup]
    public void Setup() => bench = new FileStoreBenchmarkStore(new FileStoreOptions(), i => i % 10 == 0 ? OtherSubject : FileStoreBenchmarkStore.Subject);

    [GlobalCleanup]
    public void Cleanup() => bench.Dispose();

    /// <summary>One 128 B append (no wait for durability).</summary>
    [Benchmark]
    public long Append128() => bench.Append();

    /// <summary>256 appends of 128 B and one wait until all are fsynced (cost per message).</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long Append128Durable()
    {
        long last = 0;
        for (var i = 0; i < Batch; i++)
        {
            last = bench.Append();
        }

        bench.Store.WaitForDurableAsync((ulong)last).AsTask().GetAwaiter().GetResult();
        return last;
    }

    /// <summary>Loads by sequence, walking the recent messages.</summary>
    [Benchmark(OperationsPerInvoke = Loads)]
    public long Load128() => bench.LoadRecent(Loads);

    /// <summary>The next message of a literal subject (every tenth message of the stream).</summary>
    [Benchmark(OperationsPerInvoke = Loads)]
    public long LoadNextBySubject() => bench.LoadNext(OtherSubject, Loads);
}
