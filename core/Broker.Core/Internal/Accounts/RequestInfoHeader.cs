using System.Buffers;
using System.Text;
using System.Text.Json;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// The <c>Nats-Request-Info</c> header a request carries across a service import (nats-server's <c>ClientInfo</c>,
/// client.go <c>processServiceImport</c>): the requester's account and round-trip time always, its details with
/// <c>share</c>, the server with a system import; a request already carried across an import keeps the first one's
/// and gains <c>svc</c>. Written by <see cref="Events.ClientInfo"/>, the one writer of nats-server's <c>ClientInfo</c>.
/// </summary>
internal sealed class RequestInfoHeader : Events.ClientInfo
{
    private static readonly byte[] Key = "Nats-Request-Info"u8.ToArray();
    private static readonly byte[] StatusLine = "NATS/1.0\r\n"u8.ToArray();

    /// <summary>Reads the header of a request already carried across an import; null when absent or not JSON.</summary>
    public static RequestInfoHeader? Read(in ReadOnlySequence<byte> headers)
    {
        if (headers.IsEmpty)
        {
            return null;
        }

        var bytes = headers.ToArray();
        var value = Find(bytes, out _, out _);
        if (value.IsEmpty)
        {
            return null;
        }

        try
        {
            using var document = JsonDocument.Parse(value.ToArray());
            var info = new RequestInfoHeader();
            foreach (var property in document.RootElement.EnumerateObject())
            {
                info.Read(property);
            }

            return info;
        }
        catch (Exception ex) when (ex is JsonException or InvalidOperationException or FormatException)
        {
            return null;
        }
    }

    /// <summary>
    /// The request's headers with this header set (nats-server <c>setHeader</c>): the original ones without a
    /// <c>Nats-Request-Info</c> line, then the new line, then the blank line; <c>NATS/1.0</c> alone when there were none.
    /// </summary>
    public byte[] Apply(in ReadOnlySequence<byte> headers) => Compose(headers, Line());

    /// <summary>The header's line, <c>Nats-Request-Info: {...}</c> and its CRLF.</summary>
    public byte[] Line()
    {
        var json = Serialize();
        var line = new byte[Key.Length + 2 + json.Length + 2];
        Key.CopyTo(line, 0);
        ": "u8.CopyTo(line.AsSpan(Key.Length));
        json.CopyTo(line, Key.Length + 2);
        "\r\n"u8.CopyTo(line.AsSpan(line.Length - 2));
        return line;
    }

    /// <summary>
    /// <paramref name="headers"/> without their <c>Nats-Request-Info</c> line, then <paramref name="line"/>, then the blank
    /// line (nats-server <c>setHeader</c>); <c>NATS/1.0</c> first when there were none.
    /// </summary>
    public static byte[] Compose(in ReadOnlySequence<byte> headers, ReadOnlySpan<byte> line)
    {
        var original = headers.IsEmpty ? [] : headers.ToArray();
        ReadOnlySpan<byte> kept;
        byte[]? trimmed = null;
        if (original.Length > 2)
        {
            var body = original.AsSpan(0, original.Length - 2);
            if (!Find(body, out var lineStart, out var lineEnd).IsEmpty || lineEnd > 0)
            {
                trimmed = new byte[body.Length - (lineEnd - lineStart)];
                body[..lineStart].CopyTo(trimmed);
                body[lineEnd..].CopyTo(trimmed.AsSpan(lineStart));
                kept = trimmed;
            }
            else
            {
                kept = body;
            }

            if (kept.Length <= StatusLine.Length + 2)
            {
                kept = StatusLine;
            }
        }
        else
        {
            kept = StatusLine;
        }

        var result = new byte[kept.Length + line.Length + 2];
        kept.CopyTo(result);
        line.CopyTo(result.AsSpan(kept.Length));
        "\r\n"u8.CopyTo(result.AsSpan(result.Length - 2));
        return result;
    }

    /// <summary>
    /// A client as nats-server's <c>getClientInfo</c> describes it: its account and round trip, and with
    /// <paramref name="detailed"/> the server and the connection's details.
    /// </summary>
    public static RequestInfoHeader Of(Clients.ClientBase client, bool detailed)
    {
        var info = new RequestInfoHeader { Account = client.Account.Name, Rtt = client.RoundTripNanoseconds };
        if (detailed)
        {
            info.Server = client.Server.ServerName;
            client.DescribeForRequestInfo(info);
        }

        return info;
    }

    private byte[] Serialize()
    {
        var buffer = new ArrayBufferWriter<byte>(128);
        using (var writer = new Utf8JsonWriter(buffer))
        {
            Write(writer);
        }

        return buffer.WrittenSpan.ToArray();
    }

    // The header's value and its line's bounds (start of the key, past its CRLF), as nats-server's getHeader and
    // removeHeaderIfPresent find it: the key at a line start followed by ':'.
    private static ReadOnlySpan<byte> Find(ReadOnlySpan<byte> headers, out int lineStart, out int lineEnd)
    {
        lineStart = 0;
        lineEnd = 0;
        var from = 0;
        while (true)
        {
            var index = headers[from..].IndexOf(Key);
            if (index < 0)
            {
                return default;
            }

            index += from;
            var end = index + Key.Length;
            if (index > 0 && headers[index - 1] == (byte)'\n' && end < headers.Length && headers[end] == (byte)':')
            {
                var crlf = headers[end..].IndexOf("\r\n"u8);
                var valueEnd = crlf < 0 ? headers.Length : end + crlf;
                lineStart = index;
                lineEnd = crlf < 0 ? headers.Length : valueEnd + 2;
                return headers[(end + 1)..valueEnd].Trim((byte)' ');
            }

            from = end;
        }
    }
}
