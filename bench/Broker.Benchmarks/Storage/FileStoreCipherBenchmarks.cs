using BenchmarkDotNet.Attributes;
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

    private const string Key = "benchmark key, not a secret 0123456789";

    private FileStoreBenchmarkStore bench = null!;

    /// <summary>The store's setting under test.</summary>
    [Params("none", "aes", "chachapoly", "snappy")]
    public string Mode { get; set; } = "none";

    [GlobalSetup]
    public void Setup() => bench = new FileStoreBenchmarkStore(Mode switch
    {
        "aes" => new FileStoreOptions { Cipher = FileStoreCipher.AesGcm, Key = Key },
        "chachapoly" => new FileStoreOptions { Cipher = FileStoreCipher.ChaCha20Poly1305, Key = Key },
        "snappy" => new FileStoreOptions { Compression = FileStoreCompression.Snappy },
        _ => new FileStoreOptions(),
    });

    [GlobalCleanup]
    public void Cleanup() => bench.Dispose();

    [Benchmark]
    public long Append128() => bench.Append();

    [Benchmark(OperationsPerInvoke = Loads)]
    public long Load128() => bench.LoadRecent(Loads);
}
