using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;

namespace Broker.Storage.FileStore.Internal.Crypto;

/// <summary>
/// Encryption at rest: a stream key derived from the configured secret with HKDF-SHA256 and the stream's random
/// salt, a key per block derived from it with the block's random salt, and one AEAD (AES-256-GCM or
/// ChaCha20-Poly1305) per record with the record's fixed header as associated data, so sequence, timestamp and
/// lengths are authenticated too. Nonces are a random 8-byte prefix chosen each time a block is opened for appending
/// plus a 4-byte counter, so a nonce never repeats under one block key.
/// </summary>
internal sealed class StreamKey
{
    private readonly byte[] key;

    private StreamKey(FileStoreCipher cipher, byte[] key)
    {
        Cipher = cipher;
        this.key = key;
    }

    public FileStoreCipher Cipher { get; }

    public static StreamKey Derive(FileStoreCipher cipher, string secret, ReadOnlySpan<byte> salt)
    {
        var material = Encoding.UTF8.GetBytes(secret);
        var derived = HKDF.DeriveKey(HashAlgorithmName.SHA256, material, 32, salt.ToArray(), "broker filestore stream v1"u8.ToArray());
        return new StreamKey(cipher, derived);
    }

    /// <summary>A value stored beside the salt that shows, at the next start, whether the configured secret is the same.</summary>
    public byte[] CheckValue() => HMACSHA256.HashData(key, "broker filestore key check"u8);

    public RecordCipher ForBlock(ReadOnlySpan<byte> blockSalt)
    {
        var derived = HKDF.DeriveKey(HashAlgorithmName.SHA256, key, 32, blockSalt.ToArray(), "broker filestore block v1"u8.ToArray());
        return new RecordCipher(Cipher, derived);
    }

    /// <summary>Seals a whole small file (checkpoint, consumer state): nonce(12) + ciphertext + tag(16).</summary>
    public byte[] SealFile(ReadOnlySpan<byte> plain, ReadOnlySpan<byte> purpose)
    {
        using var cipher = ForBlock(purpose);
        var output = new byte[plain.Length + RecordFormatSizes.CipherOverhead];
        RandomNumberGenerator.Fill(output.AsSpan(0, 12));
        cipher.Encrypt(output.AsSpan(0, 12), plain, output.AsSpan(12, plain.Length), output.AsSpan(12 + plain.Length, 16), []);
        return output;
    }

    /// <summary>Opens a file sealed by <see cref="SealFile"/>; <see langword="null"/> when it does not authenticate.</summary>
    public byte[]? OpenFile(ReadOnlySpan<byte> sealedData, ReadOnlySpan<byte> purpose)
    {
        if (sealedData.Length < RecordFormatSizes.CipherOverhead)
        {
            return null;
        }

        using var cipher = ForBlock(purpose);
        var plain = new byte[sealedData.Length - RecordFormatSizes.CipherOverhead];
        return cipher.TryDecrypt(sealedData[..12], sealedData[12..^16], sealedData[^16..], plain, []) ? plain : null;
    }
}

/// <summary>Sizes shared with the record format.</summary>
internal static class RecordFormatSizes
{
    public const int CipherOverhead = 28;
}

/// <summary>The AEAD of one block.</summary>
internal sealed class RecordCipher : IDisposable
{
    private readonly AesGcm? aes;
    private readonly ChaCha20Poly1305? chacha;
    private readonly byte[] noncePrefix = new byte[8];
    private uint counter;

    public RecordCipher(FileStoreCipher cipher, byte[] key)
    {
        if (cipher == FileStoreCipher.AesGcm)
        {
            aes = new AesGcm(key, 16);
        }
        else
        {
            chacha = new ChaCha20Poly1305(key);
        }

        RandomNumberGenerator.Fill(noncePrefix);
    }

    /// <summary>Writes a fresh nonce for the next record.</summary>
    public void NextNonce(Span<byte> nonce)
    {
        if (++counter == 0)
        {
            RandomNumberGenerator.Fill(noncePrefix);
        }

        noncePrefix.CopyTo(nonce);
        BinaryPrimitives.WriteUInt32LittleEndian(nonce[8..], counter);
    }

    public void Encrypt(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> plain, Span<byte> cipherText, Span<byte> tag, ReadOnlySpan<byte> associated)
    {
        if (aes is not null)
        {
            aes.Encrypt(nonce, plain, cipherText, tag, associated);
        }
        else
        {
            chacha!.Encrypt(nonce, plain, cipherText, tag, associated);
        }
    }

    public bool TryDecrypt(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> cipherText, ReadOnlySpan<byte> tag, Span<byte> plain, ReadOnlySpan<byte> associated)
    {
        try
        {
            if (aes is not null)
            {
                aes.Decrypt(nonce, cipherText, tag, plain, associated);
            }
            else
            {
                chacha!.Decrypt(nonce, cipherText, tag, plain, associated);
            }

            return true;
        }
        catch (AuthenticationTagMismatchException)
        {
            return false;
        }
    }

    public void Dispose()
    {
        aes?.Dispose();
        chacha?.Dispose();
    }
}
