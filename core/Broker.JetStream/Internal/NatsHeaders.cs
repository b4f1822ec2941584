using System.Buffers;
using System.Buffers.Text;
using Broker.Abstractions;

namespace Broker.JetStream.Internal;

/// <summary>
/// The <c>Nats-*</c> headers JetStream reads and writes; reading a block is the contract's
/// <see cref="NatsHeaderBlock"/>.
/// </summary>
internal static class NatsHeaders
{
    public static ReadOnlySpan<byte> MsgId => "Nats-Msg-Id"u8;
    public static ReadOnlySpan<byte> ExpectedStream => "Nats-Expected-Stream"u8;
    public static ReadOnlySpan<byte> ExpectedLastSequence => "Nats-Expected-Last-Sequence"u8;
    public static ReadOnlySpan<byte> ExpectedLastSubjectSequence => "Nats-Expected-Last-Subject-Sequence"u8;
    public static ReadOnlySpan<byte> ExpectedLastMsgId => "Nats-Expected-Last-Msg-Id"u8;
    public static ReadOnlySpan<byte> Rollup => "Nats-Rollup"u8;

    public static bool TryGetUInt64(ReadOnlySpan<byte> block, ReadOnlySpan<byte> key, out ulong number, out bool present)
    {
        number = 0;
        present = NatsHeaderBlock.TryGetValue(block, key, out var value);
        return present && Utf8Parser.TryParse(value, out number, out var consumed) && consumed == value.Length;
    }

    /// <summary>A contiguous view of a header block, copied into <paramref name="scratch"/> only when it is segmented.</summary>
    public static ReadOnlySpan<byte> Contiguous(in ReadOnlySequence<byte> headers, ref byte[]? scratch)
    {
        if (headers.IsSingleSegment)
        {
            return headers.FirstSpan;
        }

        var length = (int)headers.Length;
        if (scratch is null || scratch.Length < length)
        {
            scratch = new byte[Math.Max(length, 256)];
        }

        headers.CopyTo(scratch);
        return scratch.AsSpan(0, length);
    }

    /// <summary>Writes one header line, <c>Name: value\r\n</c>; <paramref name="name"/> ends with <c>": "</c>.</summary>
    public static void WriteLine(IBufferWriter<byte> writer, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        writer.Write(name);
        writer.Write(value);
        writer.Write("\r\n"u8);
    }

    /// <summary>
    /// Appends <c>Key: value\r\n</c> before the terminating blank line of <paramref name="block"/> (or starts a block),
    /// as nats-server's <c>genHeader</c>.
    /// </summary>
    public static void Append(ArrayBufferWriter<byte> writer, ReadOnlySpan<byte> block, string key, ReadOnlySpan<byte> value)
    {
        if (block.IsEmpty)
        {
            writer.Write("NATS/1.0\r\n"u8);
        }
        else
        {
            writer.Write(block[..^2]);
        }

        writer.Write(System.Text.Encoding.ASCII.GetBytes(key));
        writer.Write(": "u8);
        writer.Write(value);
        writer.Write("\r\n\r\n"u8);
    }
}
