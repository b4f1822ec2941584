using System.Buffers;
using System.Buffers.Text;

namespace Broker.JetStream.Internal;

/// <summary>
/// Reading and writing NATS header blocks (<c>NATS/1.0[ status]\r\nKey: value\r\n...\r\n\r\n</c>) without parsing
/// them into objects: JetStream only looks for a handful of <c>Nats-*</c> keys, case-sensitively as nats-server does.
/// </summary>
internal static class NatsHeaders
{
    public static ReadOnlySpan<byte> MsgId => "Nats-Msg-Id"u8;
    public static ReadOnlySpan<byte> ExpectedStream => "Nats-Expected-Stream"u8;
    public static ReadOnlySpan<byte> ExpectedLastSequence => "Nats-Expected-Last-Sequence"u8;
    public static ReadOnlySpan<byte> ExpectedLastSubjectSequence => "Nats-Expected-Last-Subject-Sequence"u8;
    public static ReadOnlySpan<byte> ExpectedLastMsgId => "Nats-Expected-Last-Msg-Id"u8;
    public static ReadOnlySpan<byte> Rollup => "Nats-Rollup"u8;

    /// <summary>The value of <paramref name="key"/> (trimmed), or false when absent.</summary>
    public static bool TryGet(ReadOnlySpan<byte> block, ReadOnlySpan<byte> key, out ReadOnlySpan<byte> value)
    {
        value = default;
        var line = block.IndexOf("\r\n"u8);
        if (line < 0)
        {
            return false;
        }

        var rest = block[(line + 2)..];
        while (!rest.IsEmpty)
        {
            var end = rest.IndexOf("\r\n"u8);
            var current = end < 0 ? rest : rest[..end];
            if (current.Length > key.Length && current[key.Length] == (byte)':' && current.StartsWith(key))
            {
                value = current[(key.Length + 1)..].Trim((byte)' ');
                return true;
            }

            if (end < 0)
            {
                break;
            }

            rest = rest[(end + 2)..];
        }

        return false;
    }

    public static bool TryGetUInt64(ReadOnlySpan<byte> block, ReadOnlySpan<byte> key, out ulong number, out bool present)
    {
        number = 0;
        present = TryGet(block, key, out var value);
        return present && Utf8Parser.TryParse(value, out number, out var consumed) && consumed == value.Length;
    }

    /// <summary>The status code of a status header (<c>NATS/1.0 503</c>), or 0.</summary>
    public static int Status(ReadOnlySpan<byte> block) =>
        block.Length >= 12 && block.StartsWith("NATS/1.0 "u8) && Utf8Parser.TryParse(block.Slice(9, 3), out int code, out _) ? code : 0;

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
