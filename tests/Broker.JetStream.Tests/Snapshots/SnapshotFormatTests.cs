using Broker.Abstractions;
using Broker.JetStream.Internal.Snapshots;

namespace Broker.JetStream.Tests.Snapshots;

/// <summary>
/// The pieces of nats-server's archive format: HighwayHash-64 against the reference implementation's published test
/// vectors (google/highwayhash <c>highwayhash_test.cc</c>, <c>kExpected64</c>, key bytes 0..31, input bytes 0..n-1),
/// Snappy/S2 framing both ways, S2's repeat-offset extension, and a consumer's <c>o.dat</c>.
/// </summary>
public class SnapshotFormatTests
{
    private static readonly ulong[] Expected64 =
    [
        0x907A56DE22C26E53, 0x7EAB43AAC7CDDD78, 0xB8D0569AB0B53D62, 0x5C6BEFAB8A463D80, 0xF205A46893007EDA,
        0x2B8A1668E4A94541, 0xBD4CCC325BEFCA6F, 0x4D02AE1738F59482, 0xE1205108E55F3171, 0x32D2644EC77A1584,
        0xF6E10ACDB103A90B, 0xC3BBF4615B415C15, 0x243CC2040063FA9C, 0xA89A58CE65E641FF, 0x24B031A348455A23,
        0x40793F86A449F33B, 0xCFAB3489F97EB832, 0x19FE67D2C8C5C0E2, 0x04DD90A69C565CC2, 0x75D9518E2371C504,
        0x38AD9B1141D3DD16, 0x0264432CCD8A70E0, 0xA9DB5A6288683390, 0xD7B05492003F028C, 0x205F615AEA59E51E,
        0xEEE0C89621052884, 0x1BFC1A93A7284F4F, 0x512175B5B70DA91D, 0xF71F8976A0A2C639, 0xAE093FEF1F84E3E7,
        0x22CA92B01161860F, 0x9FC7007CCF035A68, 0xA0C964D9ECD580FC, 0x2C90F73CA03181FC, 0x185CF84E5691EB9E,
        0x4FC1F5EF2752AA9B, 0xF5B7391A5E0A33EB, 0xB9B84B83B4E96C9C, 0x5E42FE712A5CD9B4, 0xA150F2F90C3F97DC,
        0x7FA522D75E2D637D, 0x181AD0CC0DFFD32B, 0x3889ED981E854028, 0xFB4297E8C586EE2D, 0x6D064A45BB28059C,
        0x90563609B3EC860C, 0x7AA4FCE94097C666, 0x1326BAC06B911E08, 0xB926168D2B154F34, 0x9919848945B1948D,
        0xA2A98FC534825EBE, 0xE9809095213EF0B6, 0x582E5483707BC0E9, 0x086E9414A88A6AF5, 0xEE86B98D20F6743D,
        0xF89B7FF609B1C0A7, 0x4C7D9CC19E22C3E8, 0x9A97005024562A6F, 0x5DD41CF423E6EBEF, 0xDF13609C0468E227,
        0x6E0DA4F64188155A, 0xB755BA4B50D7D4A1, 0x887A3484647479BD, 0xAB8EEBE9BF2139A0, 0x75542C5D4CD2A6FF,
    ];

    [Fact]
    public void HighwayHash64_gives_the_published_vectors()
    {
        var key = Enumerable.Range(0, 32).Select(i => (byte)i).ToArray();
        var data = Enumerable.Range(0, 64).Select(i => (byte)i).ToArray();
        var hash = new HighwayHash64(key);
        for (var size = 0; size <= 64; size++)
        {
            Assert.Equal(Expected64[size], hash.Compute(data.AsSpan(0, size)));
        }

        // Appended in pieces, as a record's parts are.
        hash.Reset();
        hash.Append(data.AsSpan(0, 5));
        hash.Append(data.AsSpan(5, 30));
        hash.Append(data.AsSpan(35, 29));
        Assert.Equal(Expected64[64], hash.Finish());
    }

    [Theory]
    [InlineData(0)]
    [InlineData(10)]
    [InlineData(65536)]
    [InlineData(300_001)]
    public void Snappy_framing_reads_back(int size)
    {
        var data = new byte[size];
        for (var i = 0; i < size; i++)
        {
            data[i] = (byte)(i % 7 == 0 ? Random.Shared.Next() : i / 100);
        }

        using var framed = new MemoryStream();
        using (var writer = new SnappyFrameWriter(framed))
        {
            writer.Write(data);
        }

        Assert.Equal("sNaPpY"u8.ToArray(), framed.ToArray().AsSpan(4, 6).ToArray());
        framed.Position = 0;
        using var reader = new S2FrameReader(framed);
        using var copy = new MemoryStream();
        reader.CopyTo(copy);
        Assert.Equal(data, copy.ToArray());
    }

    [Fact]
    public void An_S2_stream_with_repeat_offsets_decodes()
    {
        // "abcdabcdabcdXYZWabcdabcd": a literal "abcd", a copy of 8 at offset 4, a literal "XYZW", a copy of 8 at
        // offset 16, and S2's repeat (a 1-byte-offset copy with offset 0) of 4 at that offset again.
        byte[] block =
        [
            24,                                   // decoded length
            (3 << 2) | 0, (byte)'a', (byte)'b', (byte)'c', (byte)'d',
            ((8 - 4) << 2) | 1, 4,                // copy1: length 8, offset 4
            (3 << 2) | 0, (byte)'X', (byte)'Y', (byte)'Z', (byte)'W',
            ((4 - 4) << 2) | 1, 16,               // copy1: length 4, offset 16
            ((4 - 4) << 2) | 1, 0,                // repeat: length 4, offset 16 again
        ];
        var decoded = Array.Empty<byte>();
        var length = S2Block.Decode(block, ref decoded);
        Assert.Equal("abcdabcdabcdXYZWabcdabcd"u8.ToArray(), decoded.AsSpan(0, length).ToArray());

        using var framed = new MemoryStream();
        framed.Write([0xff, 6, 0, 0, .. "S2sTwO"u8]);
        var crc = SnappyFraming.MaskedCrc(decoded.AsSpan(0, length));
        framed.Write([0x00, (byte)(block.Length + 4), 0, 0, (byte)crc, (byte)(crc >> 8), (byte)(crc >> 16), (byte)(crc >> 24), .. block]);
        framed.Write([0xfe, 2, 0, 0, 0, 0]); // padding is skipped
        framed.Position = 0;
        using var reader = new S2FrameReader(framed);
        using var copy = new MemoryStream();
        reader.CopyTo(copy);
        Assert.Equal("abcdabcdabcdXYZWabcdabcd"u8.ToArray(), copy.ToArray());
    }

    [Fact]
    public void A_corrupt_chunk_is_refused()
    {
        using var framed = new MemoryStream();
        framed.Write([0xff, 6, 0, 0, .. "sNaPpY"u8, 0x01, 6, 0, 0, 1, 2, 3, 4, (byte)'h', (byte)'i']);
        framed.Position = 0;
        using var reader = new S2FrameReader(framed);
        Assert.Throws<InvalidDataException>(() => reader.CopyTo(Stream.Null));
    }

    [Fact]
    public void A_consumer_state_reads_back_as_nats_server_encodes_it()
    {
        var now = 1_700_000_000_400_000_000L;
        var state = new ConsumerState { Delivered = new SequencePair(7, 12), AckFloor = new SequencePair(3, 6) };
        state.Pending[8] = new PendingDelivery(4, now - 5_000_000_000);
        state.Pending[11] = new PendingDelivery(6, now - 1_000_000_000);
        state.Redelivered[8] = 2;
        var encoded = ConsumerStateCodec.Encode(state, now);
        Assert.Equal([22, 2, 3, 6, 7, 12, 2], encoded[..7]);
        var decoded = ConsumerStateCodec.Decode(encoded);
        Assert.Equal(state.Delivered, decoded.Delivered);
        Assert.Equal(state.AckFloor, decoded.AckFloor);
        Assert.Equal(new PendingDelivery(4, 1_699_999_995_000_000_000), decoded.Pending[8]);
        Assert.Equal(new PendingDelivery(6, 1_699_999_999_000_000_000), decoded.Pending[11]);
        Assert.Equal(2UL, decoded.Redelivered[8]);
    }
}
