using System.Buffers;
using System.Text;
using BenchmarkDotNet.Attributes;
using Broker.Abstractions;
using Broker.Storage.FileStore;

namespace Broker.Benchmarks.Storage;

/// <summary>
/// What encryption at rest and compression cost on the file store's hot paths: a 128 B append and a load by sequence
/// with no cipher, AES-256-GCM and ChaCha20-Poly1305 (one AEAD per record), and with Snappy block compression (applied
/// when a block is sealed, so it costs nothing here and shows in block loads and recovery instead).
/// </summary>
[MemoryDiagnoser]
public class FileStoreCipherBenchmarks
{
    /// <summary>Loads per invocation.</summary>
    public const int Loads = 64;

    private static readonly byte[] Subject = "bench.orders.new"u8.ToArray();

    private readonly StoredMessage message = new();
    private string directory = "";
    private IStreamStore store = null!;
    private ReadOnlySequence<byte> payload;
    private ulong next;

    /// <summary>The store's setting under test.</summary>
    [Params("none", "aes", "chachapoly", "snappy")]
    public string Mode { get; set; } = "none";

    [GlobalSetup]
    public void Setup()
    {
        directory = Path.Combine(Path.GetTempPath(), "filestore-cipher-bench-" + Guid.NewGuid().ToString("N"));
        var options = Mode switch
        {
            "aes" => new FileStoreOptions { Cipher = FileStoreCipher.AesGcm, Key = "benchmark key, not a secret 0123456789" },
            "chachapoly" => new FileStoreOptions { Cipher = FileStoreCipher.ChaCha20Poly1305, Key = "benchmark key, not a secret 0123456789" },
            "snappy" => new FileStoreOptions { Compression = FileStoreCompression.Snappy },
            _ => new FileStoreOptions(),
        };
        store = new FileStoreProvider(options).CreateAsync(new StreamStoreConfig
        {
            Name = "BENCH",
            Directory = Path.Combine(directory, "jetstream", "$G", "streams", "BENCH"),
            MaxMessages = 200_000,
            Metadata = Encoding.UTF8.GetBytes("{}"),
        }).AsTask().GetAwaiter().GetResult();
        payload = new ReadOnlySequence<byte>(new byte[128]);
        for (var i = 0; i < 20_000; i++)
        {
            store.Store(Subject, ReadOnlySequence<byte>.Empty, payload);
        }

        store.FlushAsync().AsTask().GetAwaiter().GetResult();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        store.DisposeAsync().AsTask().GetAwaiter().GetResult();
        Directory.Delete(directory, recursive: true);
    }

    [Benchmark]
    public long Append128() => (long)store.Store(Subject, ReadOnlySequence<byte>.Empty, payload).Sequence;

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
}
