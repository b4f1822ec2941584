using System.Buffers;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Encodes a message record's body into a block's cache and decodes it back, through the block's cipher when the
/// stream is encrypted. Owns the scratch buffer the plaintext passes through (grown, never shrunk, so steady appends and
/// reads allocate nothing). Not thread-safe: the stream store's lock guards every call.
/// </summary>
internal sealed class RecordCodec
{
    private byte[] scratch = new byte[256];

    /// <summary>Writes subject, headers and payload into <paramref name="record"/>'s body (encrypting it for an encrypted block).</summary>
    public void WriteBody(MessageBlock block, Span<byte> record, ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var body = record[RecordFormat.HeaderSize..^4];
        if (block.Cipher is null)
        {
            subject.CopyTo(body);
            headers.CopyTo(body[subject.Length..]);
            payload.CopyTo(body[(subject.Length + (int)headers.Length)..]);
            return;
        }

        var plain = Scratch(body.Length - RecordFormat.CipherOverhead);
        subject.CopyTo(plain);
        headers.CopyTo(plain[subject.Length..]);
        payload.CopyTo(plain[(subject.Length + (int)headers.Length)..]);
        var nonce = body[..RecordFormat.NonceSize];
        block.Cipher.NextNonce(nonce);
        block.Cipher.Encrypt(nonce, plain, body.Slice(RecordFormat.NonceSize, plain.Length), body[^RecordFormat.TagSize..], record[..RecordFormat.HeaderSize]);
    }

    /// <summary>Copies the message at <paramref name="offset"/> of a loaded block into <paramref name="message"/>; false when it fails to decrypt.</summary>
    public static bool ReadMessage(MessageBlock block, uint offset, StoredMessage message)
    {
        var record = block.Cache.AsSpan((int)offset);
        var header = RecordFormat.ReadVerified(record);
        record = record[..header.Length];
        var body = record[RecordFormat.HeaderSize..^4];
        if (block.Cipher is null)
        {
            var subject = body[..header.SubjectLength];
            var headers = body.Slice(header.SubjectLength, header.HeadersLength);
            var payload = body[(header.SubjectLength + header.HeadersLength)..];
            message.Set(header.Sequence, header.Timestamp, subject, headers, payload);
            return true;
        }

        var target = message.Prepare(header.Sequence, header.Timestamp, header.SubjectLength, header.HeadersLength, header.PayloadLength(encrypted: true));
        return block.Cipher.TryDecrypt(
            body[..RecordFormat.NonceSize],
            body[RecordFormat.NonceSize..^RecordFormat.TagSize],
            body[^RecordFormat.TagSize..],
            target,
            record[..RecordFormat.HeaderSize]);
    }

    /// <summary>
    /// The subject of the message at an offset of a loaded block (decrypted into the scratch buffer when encrypted:
    /// valid until the next call); empty when it fails to decrypt.
    /// </summary>
    public ReadOnlySpan<byte> SubjectAt(MessageBlock block, uint offset, out RecordHeader header)
    {
        var record = block.Cache.AsSpan((int)offset);
        header = RecordFormat.ReadVerified(record);
        record = record[..header.Length];
        var body = record[RecordFormat.HeaderSize..^4];
        if (block.Cipher is null)
        {
            return body[..header.SubjectLength];
        }

        var plain = Scratch(body.Length - RecordFormat.CipherOverhead);
        if (!block.Cipher.TryDecrypt(body[..RecordFormat.NonceSize], body[RecordFormat.NonceSize..^RecordFormat.TagSize], body[^RecordFormat.TagSize..], plain, record[..RecordFormat.HeaderSize]))
        {
            return [];
        }

        return plain[..header.SubjectLength];
    }

    private Span<byte> Scratch(int length)
    {
        if (scratch.Length < length)
        {
            scratch = new byte[Math.Max(length, scratch.Length * 2)];
        }

        return scratch.AsSpan(0, length);
    }
}
