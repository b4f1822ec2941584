using Broker.Adapters.WebSocket.Internal;

namespace Broker.WebSocket.Tests;

/// <summary>The vectorised unmasking against the RFC's byte-at-a-time definition, for every length and key offset around the block sizes.</summary>
public sealed class MaskingTests
{
    private static readonly byte[] Key = [0x37, 0xFA, 0x21, 0x3D];

    [Fact]
    public void Matches_the_byte_definition_at_every_length_and_starting_position()
    {
        var random = new Random(6455);
        for (var length = 0; length <= 200; length++)
        {
            var source = new byte[length];
            random.NextBytes(source);
            for (var position = 0; position < 4; position++)
            {
                var expected = new byte[length];
                for (var i = 0; i < length; i++)
                {
                    expected[i] = (byte)(source[i] ^ Key[(position + i) & 3]);
                }

                var copied = new byte[length];
                Assert.Equal((position + length) & 3, Masking.Apply(source, copied, Key, position));
                Assert.Equal(expected, copied);

                var inPlace = (byte[])source.Clone();
                Masking.Apply(inPlace, inPlace, Key, position);
                Assert.Equal(expected, inPlace);
            }
        }
    }

    [Fact]
    public void A_frame_unmasked_in_pieces_equals_one_pass()
    {
        var random = new Random(17);
        var source = new byte[1000];
        random.NextBytes(source);
        var whole = new byte[source.Length];
        Masking.Apply(source, whole, Key, 0);

        var pieces = new byte[source.Length];
        var position = 0;
        var offset = 0;
        foreach (var size in new[] { 1, 3, 7, 31, 33, 64, 5, 200, 656 })
        {
            position = Masking.Apply(source.AsSpan(offset, size), pieces.AsSpan(offset), Key, position);
            offset += size;
        }

        Assert.Equal(source.Length, offset);
        Assert.Equal(whole, pieces);
    }
}
