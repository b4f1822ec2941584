using System.Buffers;
using BenchmarkDotNet.Attributes;
using Broker.Abstractions;
using Broker.Storage.MemStore;

namespace Broker.Benchmarks.Storage;

/// <summary>
/// The memory store plugin's hot paths on a stream in steady state (a <c>max_msgs</c> limit removes the oldest
/// message with each append, so buffers are recycled through the pool): appending a 128-byte message, loading one by
/// sequence into a reused <see cref="StoredMessage"/>, and the consumer's sequential <c>LoadNext</c>. All 0 B/op.
/// </summary>
[MemoryDiagnoser]
public class MemoryStoreBenchmarks
{
    /// <summary>Operations in one benchmark invocation.</summary>
    public const int Batch = 256;

    private const int Kept = 10_000;
    private static readonly byte[] Subject = "bench.store.x"u8.ToArray();

    private IStreamStore store = null!;
    private ReadOnlySequence<byte> payload;
    private readonly StoredMessage message = new();
    private ulong nextLoad;

    [GlobalSetup]
    public void Setup()
    {
        store = new MemoryStoreProvider().CreateAsync(new StreamStoreConfig { Name = "BENCH", StorageType = "memory", MaxMessages = Kept })
            .AsTask().GetAwaiter().GetResult();
        payload = new ReadOnlySequence<byte>(new byte[128]);
        for (var i = 0; i < Kept * 2; i++)
        {
            store.Store(Subject, ReadOnlySequence<byte>.Empty, payload);
        }

        nextLoad = store.GetState().FirstSequence;
    }

    [GlobalCleanup]
    public void Cleanup() => store.DisposeAsync().AsTask().GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Batch)]
    public long Append128()
    {
        ulong last = 0;
        for (var i = 0; i < Batch; i++)
        {
            last = store.Store(Subject, ReadOnlySequence<byte>.Empty, payload).Sequence;
        }

        return (long)last;
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public long LoadBySequence128()
    {
        var state = store.GetState();
        var total = 0L;
        for (var i = 0; i < Batch; i++)
        {
            var sequence = state.FirstSequence + (ulong)i;
            if (store.Load(sequence, message) == LoadStatus.Found)
            {
                total += message.Payload.Length;
            }
        }

        return total;
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public long LoadNextSequential128()
    {
        var total = 0L;
        for (var i = 0; i < Batch; i++)
        {
            if (store.LoadNext("bench.store.*"u8, nextLoad, message, out var scanned) != LoadStatus.Found)
            {
                nextLoad = store.GetState().FirstSequence;
                continue;
            }

            nextLoad = scanned + 1;
            total += message.Payload.Length;
        }

        return total;
    }
}
