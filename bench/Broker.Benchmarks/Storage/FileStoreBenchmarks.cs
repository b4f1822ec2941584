using System.Buffers;
using System.Text;
using BenchmarkDotNet.Attributes;
using Broker.Abstractions;
using Broker.Storage.FileStore;

namespace Broker.Benchmarks.Storage;

/// <summary>
/// The file store's hot paths on a real directory: appending a 128 B message (encode into the tail block's cache,
/// checksum, state; the disk write and fsync run on the store's committer), appending a batch and waiting until it is
/// durable (group commit: one fdatasync for the batch), loading by sequence and the next message of a subject into a
/// reused <see cref="StoredMessage"/>. The stream keeps 200,000 messages (discard old) so a long run stays bounded.
/// </summary>
[MemoryDiagnoser]
public class FileStoreBenchmarks
{
    /// <summary>Appends per durable batch: what many publishers waiting at once look like to the store.</summary>
    public const int Batch = 256;

    /// <summary>Loads per invocation.</summary>
    public const int Loads = 64;

    private const int Kept = 200_000;

    private static readonly byte[] Subject = "bench.orders.new"u8.ToArray();
    private static readonly byte[] OtherSubject = "bench.orders.old"u8.ToArray();

    private readonly StoredMessage message = new();
    private string directory = "";
    private IStreamStore store = null!;
    private ReadOnlySequence<byte> payload;
    private ulong next;

    [GlobalSetup]
    public void Setup()
    {
        directory = Path.Combine(Path.GetTempPath(), "filestore-bench-" + Guid.NewGuid().ToString("N"));
        var provider = new FileStoreProvider(new FileStoreOptions());
        store = provider.CreateAsync(new StreamStoreConfig
        {
            Name = "BENCH",
            Directory = Path.Combine(directory, "jetstream", "$G", "streams", "BENCH"),
            MaxMessages = Kept,
            Metadata = Encoding.UTF8.GetBytes("{}"),
        }).AsTask().GetAwaiter().GetResult();
        payload = new ReadOnlySequence<byte>(new byte[128]);
        for (var i = 0; i < 20_000; i++)
        {
            store.Store(i % 10 == 0 ? OtherSubject : Subject, ReadOnlySequence<byte>.Empty, payload);
        }

        store.FlushAsync().AsTask().GetAwaiter().GetResult();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        store.DisposeAsync().AsTask().GetAwaiter().GetResult();
        Directory.Delete(directory, recursive: true);
    }

    /// <summary>One 128 B append (no wait for durability).</summary>
    [Benchmark]
    public long Append128() => (long)store.Store(Subject, ReadOnlySequence<byte>.Empty, payload).Sequence;

    /// <summary>256 appends of 128 B and one wait until all are fsynced (cost per message).</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long Append128Durable()
    {
        ulong last = 0;
        for (var i = 0; i < Batch; i++)
        {
            last = store.Store(Subject, ReadOnlySequence<byte>.Empty, payload).Sequence;
        }

        store.WaitForDurableAsync(last).AsTask().GetAwaiter().GetResult();
        return (long)last;
    }

    /// <summary>Loads by sequence, walking the recent messages.</summary>
    [Benchmark(OperationsPerInvoke = Loads)]
    public long Load128()
    {
        var state = store.GetState();
        long total = 0;
        for (var i = 0; i < Loads; i++)
        {
            if (next < state.FirstSequence || next > state.LastSequence)
            {
                next = Math.Max(state.FirstSequence, state.LastSequence - 10_000);
            }

            if (store.Load(next++, message) == LoadStatus.Found)
            {
                total += message.Payload.Length;
            }
        }

        return total;
    }

    /// <summary>The next message of a literal subject (every tenth message of the stream).</summary>
    [Benchmark(OperationsPerInvoke = Loads)]
    public long LoadNextBySubject()
    {
        var state = store.GetState();
        long total = 0;
        for (var i = 0; i < Loads; i++)
        {
            if (next < state.FirstSequence || next > state.LastSequence)
            {
                next = state.FirstSequence;
            }

            if (store.LoadNext(OtherSubject, next, message, out var found) == LoadStatus.Found)
            {
                total += message.Payload.Length;
                next = found + 1;
            }
            else
            {
                next = state.FirstSequence;
            }
        }

        return total;
    }
}
