using Broker.Abstractions;
using Broker.Storage.Conformance;
using Broker.Storage.FileStore;

namespace Broker.Storage.Tests;

/// <summary>The storage conformance suite over the file store (default policy: fsync before durable).</summary>
public sealed class FileStoreConformance : StreamStoreConformanceTests
{
    protected override bool IsDurable => true;

    protected override bool KeepsExpiredForMarker => true;

    protected override IStreamStoreProvider CreateProvider() => new FileStoreProvider(new FileStoreOptions());
}

/// <summary>The suite again with small blocks, Snappy compression and AES-GCM encryption, so every path crosses blocks.</summary>
public sealed class FileStoreConformanceEncryptedCompressed : StreamStoreConformanceTests
{
    protected override bool IsDurable => true;

    protected override bool KeepsExpiredForMarker => true;

    protected override IStreamStoreProvider CreateProvider() => new FileStoreProvider(new FileStoreOptions
    {
        BlockSize = 4096,
        Compression = FileStoreCompression.Snappy,
        Cipher = FileStoreCipher.AesGcm,
        Key = "conformance-test-key-0123456789abcdef",
    });
}

/// <summary>
/// The suite under <c>sync_interval: 2m</c> with small blocks and encryption: appends write their own records (block
/// rolls, head markers of limits, removals and purges between them), the committer the rest.
/// </summary>
public sealed class FileStoreConformanceSyncInterval : StreamStoreConformanceTests
{
    protected override bool IsDurable => true;

    protected override bool KeepsExpiredForMarker => true;

    protected override IStreamStoreProvider CreateProvider() => new FileStoreProvider(new FileStoreOptions
    {
        SyncInterval = TimeSpan.FromMinutes(2),
        BlockSize = 4096,
        Cipher = FileStoreCipher.ChaCha20Poly1305,
        Key = "conformance-test-key-0123456789abcdef",
    });
}
