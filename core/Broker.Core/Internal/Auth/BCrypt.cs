using System.Buffers;
using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// bcrypt password hashes (<c>$2a$</c>, <c>$2b$</c>, <c>$2x$</c>, <c>$2y$</c>), as nats-server accepts them for passwords
/// and tokens. There is no bcrypt package in our dependency set, so this is a from-the-paper implementation
/// (Provos and Mazières, "A Future-Adaptable Password Scheme", and the OpenBSD format). The password is its UTF-8
/// bytes plus a NUL terminator, cut at 72 bytes, as Go's <c>x/crypto/bcrypt</c> (used by nats-server) and OpenBSD
/// <c>$2b$</c> do; the <c>$2a$</c>/<c>$2b$</c>/<c>$2y$</c> variants differ only in historic bugs of other
/// implementations, so all are verified the same way, and so is <c>$2x$</c> (as Go does).
/// </summary>
internal static class BCrypt
{
    /// <summary>The smallest cost (log2 of the rounds) a hash may have.</summary>
    public const int MinCost = 4;

    /// <summary>The largest cost a hash may have.</summary>
    public const int MaxCost = 31;

    /// <summary>The cost nats' <c>passwd</c> tool uses by default.</summary>
    public const int DefaultCost = 11;

    private const int SaltLength = 16;
    private const int HashLength = 23;
    private const int EncodedSaltLength = 22;
    private const int EncodedHashLength = 31;
    private const int HashStringLength = 7 + EncodedSaltLength + EncodedHashLength;
    private const int MaxKeyLength = 72;

    // bcrypt's own base64 alphabet (not RFC 4648's), without padding.
    private static ReadOnlySpan<byte> Alphabet => "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"u8;

    // The 192-bit block bcrypt encrypts 64 times with the expensive state.
    private static ReadOnlySpan<byte> MagicText => "OrpheanBeholderScryDoubt"u8;

    /// <summary>
    /// Whether a configured password or token is a bcrypt hash, by nats-server's rule (<c>auth.go isBcrypt</c>):
    /// it starts with <c>$2a$</c>, <c>$2b$</c>, <c>$2x$</c> or <c>$2y$</c> followed by two digits and <c>$</c>.
    /// Such a value is always verified as bcrypt, so a malformed one matches no password.
    /// </summary>
    public static bool IsHash(string? value) =>
        value is { Length: >= 7 }
        && value[0] == '$' && value[1] == '2' && value[2] is 'a' or 'b' or 'x' or 'y' && value[3] == '$'
        && char.IsAsciiDigit(value[4]) && char.IsAsciiDigit(value[5]) && value[6] == '$';

    /// <summary>Checks a password against a bcrypt hash; a malformed hash yields <see langword="false"/>.</summary>
    public static bool Verify(string? password, string? hash)
    {
        if (password is null || hash is null || hash.Length != HashStringLength || !IsHash(hash))
        {
            return false;
        }

        var cost = ((hash[4] - '0') * 10) + (hash[5] - '0');
        Span<byte> salt = stackalloc byte[SaltLength];
        if (cost is < MinCost or > MaxCost || !TryDecode(hash.AsSpan(7, EncodedSaltLength), salt))
        {
            return false;
        }

        Span<byte> computed = stackalloc byte[HashLength];
        Compute(password, salt, cost, computed);
        Span<byte> expected = stackalloc byte[EncodedHashLength];
        Encode(computed, expected);

        // Compare encoded text as Go does (a non-canonical last character does not verify), in constant time.
        Span<byte> stored = stackalloc byte[EncodedHashLength];
        var storedText = hash.AsSpan(7 + EncodedSaltLength);
        for (var i = 0; i < stored.Length; i++)
        {
            stored[i] = (byte)Math.Min(storedText[i], (char)0xFF);
        }

        return CryptographicOperations.FixedTimeEquals(expected, stored);
    }

    /// <summary>Hashes a password with a random salt, giving a <c>$2a$</c> string as nats' <c>passwd</c> tool does.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="cost"/> is outside 4..31.</exception>
    public static string HashPassword(string password, int cost = DefaultCost)
    {
        ArgumentNullException.ThrowIfNull(password);
        ArgumentOutOfRangeException.ThrowIfLessThan(cost, MinCost);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(cost, MaxCost);

        Span<byte> salt = stackalloc byte[SaltLength];
        RandomNumberGenerator.Fill(salt);
        Span<byte> computed = stackalloc byte[HashLength];
        Compute(password, salt, cost, computed);

        Span<byte> text = stackalloc byte[HashStringLength];
        "$2a$"u8.CopyTo(text);
        text[4] = (byte)('0' + (cost / 10));
        text[5] = (byte)('0' + (cost % 10));
        text[6] = (byte)'$';
        Encode(salt, text.Slice(7, EncodedSaltLength));
        Encode(computed, text[(7 + EncodedSaltLength)..]);
        return Encoding.ASCII.GetString(text);
    }

    /// <summary>EksBlowfish setup with the password and salt, then 64 encryptions of the magic text.</summary>
    private static void Compute(string password, ReadOnlySpan<byte> salt, int cost, Span<byte> output)
    {
        var byteCount = Encoding.UTF8.GetByteCount(password);
        var rented = ArrayPool<byte>.Shared.Rent(byteCount + 1);
        Span<byte> key = stackalloc byte[MaxKeyLength];
        Span<uint> state = stackalloc uint[Blowfish.StateLength];
        try
        {
            // The NUL terminator is part of the key (the C heritage of the scheme); beyond 72 bytes nothing counts.
            var written = Encoding.UTF8.GetBytes(password, rented);
            rented[written] = 0;
            var keyLength = Math.Min(written + 1, MaxKeyLength);
            rented.AsSpan(0, keyLength).CopyTo(key);
            key = key[..keyLength];

            Blowfish.Initialize(state);
            Blowfish.ExpandKey(state, key, salt);
            var rounds = 1L << cost;
            for (var i = 0L; i < rounds; i++)
            {
                Blowfish.ExpandKey(state, key, default);
                Blowfish.ExpandKey(state, salt, default);
            }

            Span<uint> block = stackalloc uint[MagicText.Length / 4];
            for (var i = 0; i < block.Length; i++)
            {
                block[i] = BinaryPrimitives.ReadUInt32BigEndian(MagicText[(i * 4)..]);
            }

            for (var round = 0; round < 64; round++)
            {
                for (var i = 0; i < block.Length; i += 2)
                {
                    Blowfish.Encrypt(state, ref block[i], ref block[i + 1]);
                }
            }

            Span<byte> bytes = stackalloc byte[MagicText.Length];
            for (var i = 0; i < block.Length; i++)
            {
                BinaryPrimitives.WriteUInt32BigEndian(bytes[(i * 4)..], block[i]);
            }

            // bcrypt keeps 23 of the 24 bytes (a quirk of the original encoding that every implementation kept).
            bytes[..HashLength].CopyTo(output);
        }
        finally
        {
            // The password and the state derived from it should not outlive the check.
            CryptographicOperations.ZeroMemory(rented.AsSpan(0, byteCount + 1));
            ArrayPool<byte>.Shared.Return(rented);
            CryptographicOperations.ZeroMemory(key);
            CryptographicOperations.ZeroMemory(System.Runtime.InteropServices.MemoryMarshal.AsBytes(state));
        }
    }

    /// <summary>bcrypt base64: 3 bytes to 4 characters, a short last group without padding.</summary>
    private static void Encode(ReadOnlySpan<byte> data, Span<byte> destination)
    {
        var o = 0;
        var i = 0;
        while (i < data.Length)
        {
            var c1 = data[i++];
            destination[o++] = Alphabet[c1 >> 2];
            var carry = (c1 & 0x03) << 4;
            if (i >= data.Length)
            {
                destination[o++] = Alphabet[carry];
                break;
            }

            var c2 = data[i++];
            destination[o++] = Alphabet[carry | (c2 >> 4)];
            carry = (c2 & 0x0F) << 2;
            if (i >= data.Length)
            {
                destination[o++] = Alphabet[carry];
                break;
            }

            var c3 = data[i++];
            destination[o++] = Alphabet[carry | (c3 >> 6)];
            destination[o++] = Alphabet[c3 & 0x3F];
        }
    }

    /// <summary>Decodes bcrypt base64 until <paramref name="destination"/> is full; false on a foreign character.</summary>
    private static bool TryDecode(ReadOnlySpan<char> text, Span<byte> destination)
    {
        var o = 0;
        var i = 0;
        while (o < destination.Length)
        {
            if (i + 1 >= text.Length || !TryValue(text[i], out var c1) || !TryValue(text[i + 1], out var c2))
            {
                return false;
            }

            destination[o++] = (byte)((c1 << 2) | (c2 >> 4));
            if (o == destination.Length)
            {
                break;
            }

            if (i + 2 >= text.Length || !TryValue(text[i + 2], out var c3))
            {
                return false;
            }

            destination[o++] = (byte)((c2 << 4) | (c3 >> 2));
            if (o == destination.Length)
            {
                break;
            }

            if (i + 3 >= text.Length || !TryValue(text[i + 3], out var c4))
            {
                return false;
            }

            destination[o++] = (byte)((c3 << 6) | c4);
            i += 4;
        }

        return true;
    }

    private static bool TryValue(char c, out int value)
    {
        value = c < 0x80 ? Alphabet.IndexOf((byte)c) : -1;
        return value >= 0;
    }
}
