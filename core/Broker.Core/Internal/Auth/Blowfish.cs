using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// The parts of the Blowfish cipher that bcrypt's expensive key schedule (EksBlowfish, Provos and Mazières 1999)
/// needs: the initial state, block encryption and the (optionally salted) key expansion. The state is a span of
/// <see cref="StateLength"/> words, the P-array followed by the four S-boxes, so callers can keep it on the stack.
/// </summary>
internal static partial class Blowfish
{
    /// <summary>Words in the P-array.</summary>
    public const int PLength = 18;

    /// <summary>Words in the four S-boxes together.</summary>
    public const int SLength = 4 * 256;

    /// <summary>Words of a whole cipher state (P-array then S-boxes).</summary>
    public const int StateLength = PLength + SLength;

    /// <summary>Loads the initial state (digits of pi) into <paramref name="state"/>.</summary>
    public static void Initialize(Span<uint> state)
    {
        CheckState(state);
        InitialP.CopyTo(state);
        InitialS.CopyTo(state[PLength..]);
    }

    /// <summary>Encrypts one 64-bit block, given as its big-endian halves, in place.</summary>
    public static void Encrypt(ReadOnlySpan<uint> state, ref uint left, ref uint right)
    {
        CheckState(state);
        ref var p = ref MemoryMarshal.GetReference(state);
        var block = Encrypt(ref p, ref Unsafe.Add(ref p, PLength), left, right);
        left = (uint)(block >> 32);
        right = (uint)block;
    }

    /// <summary>
    /// Blowfish's key schedule mixed with a salt, as bcrypt's <c>ExpandKey(state, salt, key)</c>: the key is XORed
    /// cyclically into the P-array, then the whole state is rewritten with successive encryptions of a block that
    /// has the salt XORed in cyclically. An empty salt gives the plain Blowfish key schedule.
    /// </summary>
    public static void ExpandKey(Span<uint> state, ReadOnlySpan<byte> key, ReadOnlySpan<byte> salt)
    {
        CheckState(state);
        if (key.IsEmpty)
        {
            throw new ArgumentException("The key must not be empty.", nameof(key));
        }

        var keyPosition = 0;
        for (var i = 0; i < PLength; i++)
        {
            state[i] ^= NextWord(key, ref keyPosition);
        }

        ref var p = ref MemoryMarshal.GetReference(state);
        ref var s = ref Unsafe.Add(ref p, PLength);
        uint left = 0;
        uint right = 0;
        var saltPosition = 0;

        // P-array and S-boxes are rewritten by the same walk: they are contiguous in the state.
        for (var i = 0; i < StateLength; i += 2)
        {
            if (!salt.IsEmpty)
            {
                left ^= NextWord(salt, ref saltPosition);
                right ^= NextWord(salt, ref saltPosition);
            }

            var block = Encrypt(ref p, ref s, left, right);
            left = (uint)(block >> 32);
            right = (uint)block;
            Unsafe.Add(ref p, i) = left;
            Unsafe.Add(ref p, i + 1) = right;
        }
    }

    /// <summary>Reads the next 32 bits of <paramref name="data"/> big-endian, wrapping around at its end.</summary>
    private static uint NextWord(ReadOnlySpan<byte> data, ref int position)
    {
        uint word = 0;
        for (var i = 0; i < 4; i++)
        {
            word = (word << 8) | data[position];
            position = position + 1 == data.Length ? 0 : position + 1;
        }

        return word;
    }

    // The hot loop of bcrypt (2^cost x 2 x 521 calls): the indexes are bytes into 256-word boxes and the state
    // length is checked once on entry, so unchecked access is safe and keeps the bounds checks out of it. The 16
    // rounds are unrolled and the block is returned by value so both halves stay in registers.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Encrypt(ref uint p, ref uint s, uint left, uint right)
    {
        var l = left ^ p;
        var r = right;
        r ^= F(ref s, l) ^ Unsafe.Add(ref p, 1);
        l ^= F(ref s, r) ^ Unsafe.Add(ref p, 2);
        r ^= F(ref s, l) ^ Unsafe.Add(ref p, 3);
        l ^= F(ref s, r) ^ Unsafe.Add(ref p, 4);
        r ^= F(ref s, l) ^ Unsafe.Add(ref p, 5);
        l ^= F(ref s, r) ^ Unsafe.Add(ref p, 6);
        r ^= F(ref s, l) ^ Unsafe.Add(ref p, 7);
        l ^= F(ref s, r) ^ Unsafe.Add(ref p, 8);
        r ^= F(ref s, l) ^ Unsafe.Add(ref p, 9);
        l ^= F(ref s, r) ^ Unsafe.Add(ref p, 10);
        r ^= F(ref s, l) ^ Unsafe.Add(ref p, 11);
        l ^= F(ref s, r) ^ Unsafe.Add(ref p, 12);
        r ^= F(ref s, l) ^ Unsafe.Add(ref p, 13);
        l ^= F(ref s, r) ^ Unsafe.Add(ref p, 14);
        r ^= F(ref s, l) ^ Unsafe.Add(ref p, 15);
        l ^= F(ref s, r) ^ Unsafe.Add(ref p, 16);
        return ((ulong)(r ^ Unsafe.Add(ref p, PLength - 1)) << 32) | l;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint F(ref uint s, uint x) =>
        ((Unsafe.Add(ref s, (int)(x >> 24)) + Unsafe.Add(ref s, 256 + (int)((x >> 16) & 0xFF)))
            ^ Unsafe.Add(ref s, 512 + (int)((x >> 8) & 0xFF)))
        + Unsafe.Add(ref s, 768 + (int)(x & 0xFF));

    private static void CheckState(ReadOnlySpan<uint> state)
    {
        if (state.Length != StateLength)
        {
            throw new ArgumentException($"A Blowfish state has {StateLength} words.", nameof(state));
        }
    }
}
