using System.Buffers;
using System.Security.Cryptography;
using System.Text;
using Broker.Abstractions;
using Broker.Storage.FileStore;
using Broker.Storage.FileStore.Internal;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.FileStore.Tests.Parts;

/// <summary><see cref="RecordCodec"/>: a record's body round-trips, in the clear and through a block's cipher, and a tampered one is refused.</summary>
public sealed class RecordCodecTests
{
    private static MessageBlock Block(bool encrypted)
    {
        var salt = RandomNumberGenerator.GetBytes(16);
        var key = encrypted ? StreamKey.Derive(FileStoreCipher.AesGcm, "a secret of the test", RandomNumberGenerator.GetBytes(16)) : null;
        return new MessageBlock(new BlockBuffers(4096), 1, "/sim/1.blk", encrypted ? BlockFileHeader.Encrypted : (byte)0, salt, key?.ForBlock(salt))
        {
            Cache = new byte[1024],
        };
    }

    private static int Write(RecordCodec codec, MessageBlock block, string subject, string headers, string payload)
    {
        var (s, h, p) = (Encoding.UTF8.GetBytes(subject), Encoding.UTF8.GetBytes(headers), Encoding.UTF8.GetBytes(payload));
        var length = RecordFormat.MessageLength(s.Length, h.Length, p.Length, block.Encrypted);
        var record = block.Cache.AsSpan(0, length);
        RecordFormat.WriteHeader(record, 7, RecordKind.Message, 1234, s.Length, h.Length);
        codec.WriteBody(block, record, s, new ReadOnlySequence<byte>(h), new ReadOnlySequence<byte>(p));
        RecordFormat.Seal(record);
        return length;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_record_reads_back_as_written(bool encrypted)
    {
        var codec = new RecordCodec();
        var block = Block(encrypted);
        var length = Write(codec, block, "S.subject", "NATS/1.0\r\nA: b\r\n\r\n", new string('p', 700));
        Assert.Equal(encrypted, block.Cache.AsSpan(0, length).IndexOf("S.subject"u8) < 0);

        var message = new StoredMessage();
        Assert.True(RecordCodec.ReadMessage(block, 0, message));
        Assert.Equal((7UL, 1234L), (message.Sequence, message.Timestamp));
        Assert.Equal("S.subject", Encoding.UTF8.GetString(message.Subject.Span));
        Assert.Equal("NATS/1.0\r\nA: b\r\n\r\n", Encoding.UTF8.GetString(message.Headers.Span));
        Assert.Equal(new string('p', 700), Encoding.UTF8.GetString(message.Payload.Span));
        Assert.Equal("S.subject", Encoding.UTF8.GetString(codec.SubjectAt(block, 0, out var header)));
        Assert.Equal(length, header.Length);
    }

    [Fact]
    public void A_tampered_encrypted_record_is_refused()
    {
        var codec = new RecordCodec();
        var block = Block(encrypted: true);
        var length = Write(codec, block, "S.subject", "", "payload");

        // A flipped ciphertext byte under a valid checksum (as a bit rot the checksum missed, or a forgery).
        block.Cache![RecordFormat.HeaderSize + RecordFormat.NonceSize + 2] ^= 1;
        RecordFormat.Seal(block.Cache.AsSpan(0, length));
        Assert.False(RecordCodec.ReadMessage(block, 0, new StoredMessage()));
        Assert.True(codec.SubjectAt(block, 0, out _).IsEmpty);
    }
}
