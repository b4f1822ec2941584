using System.Text;
using Broker.Abstractions;
using Broker.Storage.FileStore;
using static Broker.FileStore.Tests.StoreFixture;

namespace Broker.FileStore.Tests;

/// <summary>Encryption at rest and block compression: round trips through restarts, nothing readable on disk, wrong keys refused.</summary>
public sealed class EncryptionCompressionTests : IDisposable
{
    private readonly StoreFixture fixture = new();

    public void Dispose() => fixture.Dispose();

    [Theory(Timeout = 30_000)]
    [InlineData(FileStoreCipher.AesGcm)]
    [InlineData(FileStoreCipher.ChaCha20Poly1305)]
    public async Task Encrypted_streams_leave_no_plaintext_on_disk_and_recover_with_the_key(FileStoreCipher cipher)
    {
        fixture.Options = new FileStoreOptions { Cipher = cipher, Key = "a secret of the operator, 32+ chars", BlockSize = 4096 };
        await using (var store = await fixture.CreateAsync("E", c => c with { Metadata = Encoding.UTF8.GetBytes("{\"secret-config\":1}") }))
        {
            for (var i = 0; i < 200; i++)
            {
                Put(store, "E.confidential", "top-secret-payload-" + i, "NATS/1.0\r\nX-Secret: hdr\r\n\r\n");
            }

            var consumer = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C", Durable = true, Metadata = Encoding.UTF8.GetBytes("consumer-secret") });
            consumer.UpdateDelivered(1, 1, 1, 1);
            await consumer.FlushAsync();
        }

        foreach (var file in Directory.GetFiles(fixture.StreamDirectory("E"), "*", SearchOption.AllDirectories))
        {
            var text = Encoding.Latin1.GetString(File.ReadAllBytes(file));
            Assert.DoesNotContain("top-secret", text);
            Assert.DoesNotContain("confidential", text);
            Assert.DoesNotContain("X-Secret", text);
            Assert.DoesNotContain("secret-config", text);
            Assert.DoesNotContain("consumer-secret", text);
        }

        await using (var store = await fixture.ReopenAsync("E"))
        {
            Assert.Equal(200UL, store.GetState().Messages);
            Assert.Equal(("E.confidential", "top-secret-payload-150", "NATS/1.0\r\nX-Secret: hdr\r\n\r\n"), Get(store, 151));
            Assert.Equal(new SequencePair(1, 1), Assert.Single(store.ConsumerStores).GetState().Delivered);
        }

        fixture.Options = new FileStoreOptions { Cipher = cipher, Key = "another key" };
        Assert.Empty(await fixture.Provider().RecoverAsync(new StoreRecoveryContext("$G", fixture.StreamsDirectory)));
        fixture.Options = new FileStoreOptions();
        Assert.Empty(await fixture.Provider().RecoverAsync(new StoreRecoveryContext("$G", fixture.StreamsDirectory)));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_tampered_encrypted_record_is_not_served()
    {
        fixture.Options = new FileStoreOptions { Cipher = FileStoreCipher.ChaCha20Poly1305, Key = "key-for-tamper-test-0123456789" };
        await using (var store = await fixture.CreateAsync())
        {
            Put(store, "S.a", new string('z', 64));
            Put(store, "S.a", new string('z', 64));
        }

        // Flip a ciphertext byte and fix the record's CRC so only the AEAD tag can tell.
        var block = Directory.GetFiles(Path.Combine(fixture.StreamDirectory("S"), "msgs"), "*.blk").Single();
        var bytes = File.ReadAllBytes(block);
        var recordStart = 32;
        var length = BitConverter.ToInt32(bytes, recordStart);
        bytes[recordStart + 26 + 12 + 5] ^= 0x10;
        var crc = Crc(bytes.AsSpan(recordStart, length - 4));
        BitConverter.TryWriteBytes(bytes.AsSpan(recordStart + length - 4), crc);
        File.WriteAllBytes(block, bytes);

        await using var reopened = await fixture.ReopenAsync();
        Assert.Null(Get(reopened, 1));
        Assert.Equal(new string('z', 64), Get(reopened, 2)!.Value.Payload);
    }

    [Fact(Timeout = 30_000)]
    public async Task Compressed_blocks_are_smaller_and_recover()
    {
        fixture.Options = new FileStoreOptions { Compression = FileStoreCompression.Snappy, BlockSize = 16384 };
        var payload = string.Concat(Enumerable.Repeat("compressible text ", 20));
        await using (var store = await fixture.CreateAsync())
        {
            for (var i = 0; i < 500; i++)
            {
                Put(store, "S.c", payload + i);
            }

            await store.FlushAsync();
            var deadline = DateTime.UtcNow.AddSeconds(15);
            while (DateTime.UtcNow < deadline && !Directory.GetFiles(Path.Combine(fixture.StreamDirectory("S"), "msgs"), "*.blk").Any(f => new FileInfo(f).Length < 8192))
            {
                await Task.Delay(100);
            }

            store.Remove(3, secureErase: true);
            await store.FlushAsync();
        }

        var sizes = Directory.GetFiles(Path.Combine(fixture.StreamDirectory("S"), "msgs"), "*.blk").Select(f => new FileInfo(f).Length).ToList();
        Assert.Contains(sizes, s => s < 8192);
        await using var reopened = await fixture.ReopenAsync();
        Assert.Equal(499UL, reopened.GetState().Messages);
        Assert.Null(Get(reopened, 3));
        Assert.Equal(payload + 250, Get(reopened, 251)!.Value.Payload);
    }

    private static uint Crc(ReadOnlySpan<byte> data)
    {
        var crc = ~0u;
        foreach (var b in data)
        {
            crc = System.Numerics.BitOperations.Crc32C(crc, b);
        }

        return ~crc;
    }
}
