using System.Buffers;
using System.Buffers.Text;
using System.Runtime.CompilerServices;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The MSG and HMSG control lines a NATS connection writes before a delivered message (nats-server's
/// <c>msgHeader</c>): <c>MSG &lt;subject&gt; &lt;sid&gt; [reply] &lt;size&gt;\r\n</c> and
/// <c>HMSG &lt;subject&gt; &lt;sid&gt; [reply] &lt;header size&gt; &lt;total size&gt;\r\n</c>.
/// </summary>
internal static class MessageFrame
{
    /// <summary>Frames up to this size are written with one Reserve/Advance; larger ones are copied segment by segment.</summary>
    public const int SingleSpanLimit = 16 * 1024;

    /// <summary>Longest possible "HMSG  &lt;sid&gt;  &lt;hdr&gt; &lt;total&gt;\r\n" around subject, sid and reply: two 10-digit sizes and spaces.</summary>
    public const int LineOverhead = 5 + 4 + 10 + 1 + 10 + 2;

    /// <summary>
    /// Writes a whole frame (line, headers when <paramref name="withHeaders"/>, payload, CRLF) into the output, its
    /// lock held: with one Reserve/Advance up to <see cref="SingleSpanLimit"/>, segment by segment above.
    /// <paramref name="lineLength"/> is the room for the line (<see cref="LineOverhead"/> plus subject, sid and reply).
    /// </summary>
    // Inlined into the delivery path, where it was written before it had a name.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Write(
        ConnectionOutput output,
        bool withHeaders,
        ReadOnlySpan<byte> subject,
        ReadOnlySpan<byte> sid,
        ReadOnlySpan<byte> replyTo,
        in ReadOnlySequence<byte> headers,
        in ReadOnlySequence<byte> payload,
        int headerLength,
        int totalLength,
        int lineLength)
    {
        var frameLength = lineLength + totalLength + 2;
        if (frameLength <= SingleSpanLimit)
        {
            var span = output.Reserve(frameLength);
            var written = WriteLine(span, withHeaders, subject, sid, replyTo, headerLength, totalLength);
            if (withHeaders)
            {
                headers.CopyTo(span[written..]);
                written += headerLength;
            }

            payload.CopyTo(span[written..]);
            written += totalLength - headerLength;
            span[written++] = (byte)'\r';
            span[written++] = (byte)'\n';
            output.Advance(written);
        }
        else
        {
            output.Advance(WriteLine(output.Reserve(lineLength), withHeaders, subject, sid, replyTo, headerLength, totalLength));
            if (withHeaders)
            {
                output.Write(headers);
            }

            output.Write(payload);
            output.Write("\r\n"u8);
        }
    }

    /// <summary>
    /// Writes the control line into <paramref name="span"/>, which holds at least <see cref="LineOverhead"/> bytes
    /// more than the subject, sid and reply; returns the bytes written, CRLF included.
    /// </summary>
    public static int WriteLine(Span<byte> span, bool withHeaders, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> sid, ReadOnlySpan<byte> replyTo, int headerLength, int totalLength)
    {
        int written;
        if (withHeaders)
        {
            "HMSG "u8.CopyTo(span);
            written = 5;
        }
        else
        {
            "MSG "u8.CopyTo(span);
            written = 4;
        }

        subject.CopyTo(span[written..]);
        written += subject.Length;
        span[written++] = (byte)' ';
        sid.CopyTo(span[written..]);
        written += sid.Length;
        span[written++] = (byte)' ';
        if (!replyTo.IsEmpty)
        {
            replyTo.CopyTo(span[written..]);
            written += replyTo.Length;
            span[written++] = (byte)' ';
        }

        return WriteSizes(span, written, withHeaders, headerLength, totalLength);
    }

    /// <summary>
    /// Ends a message control line at <paramref name="written"/>: <c>[&lt;header size&gt; ]&lt;total size&gt;\r\n</c>
    /// (MSG/HMSG, and a leaf link's LMSG/HMSG); returns the bytes written in all.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int WriteSizes(Span<byte> span, int written, bool withHeaders, int headerLength, int totalLength)
    {
        if (withHeaders)
        {
            Utf8Formatter.TryFormat(headerLength, span[written..], out var headerDigits);
            written += headerDigits;
            span[written++] = (byte)' ';
        }

        Utf8Formatter.TryFormat(totalLength, span[written..], out var digits);
        written += digits;
        span[written++] = (byte)'\r';
        span[written++] = (byte)'\n';
        return written;
    }
}
