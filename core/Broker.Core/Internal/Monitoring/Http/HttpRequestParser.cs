using System.Buffers;
using System.Text;

namespace Broker.Core.Internal.Monitoring.Http;

internal enum HttpParseStatus
{
    /// <summary>More bytes are needed; nothing was consumed.</summary>
    Incomplete,

    /// <summary>A request head was parsed.</summary>
    Complete,

    /// <summary>The bytes are not a request we accept; answer the error and close.</summary>
    Error,
}

/// <summary>
/// Parses an HTTP/1.0 or 1.1 request head (request line and header fields, RFC 9112) from the connection's buffer. It
/// is strict where a lenient reading could be abused (whitespace before a colon, folded lines, control bytes, bad
/// Content-Length) and lenient where clients differ harmlessly (bare LF line ends, empty lines before a request).
/// </summary>
internal static class HttpRequestParser
{
    private static readonly SearchValues<byte> TokenBytes = SearchValues.Create(
        "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"u8);

    public static HttpParseStatus TryParse(
        in ReadOnlySequence<byte> buffer,
        int maxHeadBytes,
        out SequencePosition consumed,
        out HttpRequest? request,
        out HttpError error)
    {
        request = null;
        error = default;
        consumed = buffer.Start;
        var reader = new SequenceReader<byte>(buffer);

        // RFC 9112 §2.2: ignore empty lines before the request line (some clients send CRLF after a body).
        reader.AdvancePastAny((byte)'\r', (byte)'\n');
        var headStart = reader.Consumed;

        string? method = null, path = null, query = null;
        var minorVersion = 1;
        var close = false;
        var keepAlive = false;
        var hasBody = false;
        long? contentLength = null;
        while (true)
        {
            if (!reader.TryReadTo(out ReadOnlySpan<byte> line, (byte)'\n'))
            {
                if (reader.Remaining + reader.Consumed - headStart > maxHeadBytes)
                {
                    error = new HttpError(431, "Request Header Fields Too Large");
                    return HttpParseStatus.Error;
                }

                return HttpParseStatus.Incomplete;
            }

            if (reader.Consumed - headStart > maxHeadBytes)
            {
                error = new HttpError(431, "Request Header Fields Too Large");
                return HttpParseStatus.Error;
            }

            if (!line.IsEmpty && line[^1] == '\r')
            {
                line = line[..^1];
            }

            if (line.Contains((byte)'\r'))
            {
                return Fail(out error, "bare CR in request head");
            }

            if (method is null)
            {
                if (!ParseRequestLine(line, out method, out path, out query, out minorVersion, out error))
                {
                    return HttpParseStatus.Error;
                }

                continue;
            }

            if (line.IsEmpty)
            {
                break;
            }

            if (!ParseHeader(line, ref close, ref keepAlive, ref hasBody, ref contentLength, out error))
            {
                return HttpParseStatus.Error;
            }
        }

        consumed = reader.Position;
        request = new HttpRequest
        {
            Method = method,
            Path = path!,
            RawQuery = query!,
            KeepAlive = !close && (minorVersion == 1 || keepAlive),
            IsHttp10 = minorVersion == 0,
            HasBody = hasBody || contentLength > 0,
        };
        return HttpParseStatus.Complete;
    }

    private static bool ParseRequestLine(ReadOnlySpan<byte> line, out string? method, out string? path, out string? query, out int minorVersion, out HttpError error)
    {
        method = path = query = null;
        minorVersion = 1;
        error = default;
        var first = line.IndexOf((byte)' ');
        var last = line.LastIndexOf((byte)' ');
        if (first <= 0 || last == first || line[(first + 1)..last].Contains((byte)' '))
        {
            return Reject(out error, "malformed request line");
        }

        var methodBytes = line[..first];
        if (methodBytes.ContainsAnyExcept(TokenBytes))
        {
            return Reject(out error, "malformed request method");
        }

        var version = line[(last + 1)..];
        if (version.SequenceEqual("HTTP/1.1"u8) || version.SequenceEqual("HTTP/1.0"u8))
        {
            minorVersion = version[^1] - '0';
        }
        else if (version.Length == 8 && version.StartsWith("HTTP/"u8) && char.IsAsciiDigit((char)version[5]) && version[6] == '.' && char.IsAsciiDigit((char)version[7]))
        {
            error = new HttpError(505, "HTTP Version Not Supported");
            return false;
        }
        else
        {
            return Reject(out error, "malformed HTTP version");
        }

        if (!ParseTarget(line[(first + 1)..last], out path, out query))
        {
            return Reject(out error, "malformed request target");
        }

        method = Encoding.ASCII.GetString(methodBytes);
        return true;
    }

    private static bool ParseTarget(ReadOnlySpan<byte> target, out string? path, out string? query)
    {
        path = query = null;
        foreach (var b in target)
        {
            if (b <= 0x20 || b == 0x7F)
            {
                return false;
            }
        }

        // Absolute form (proxies, some tools): drop scheme and authority.
        if (target.StartsWith("http://"u8) || target.StartsWith("https://"u8))
        {
            var afterScheme = target[(target.IndexOf("//"u8) + 2)..];
            var slash = afterScheme.IndexOf((byte)'/');
            target = slash < 0 ? "/"u8 : afterScheme[slash..];
        }

        if (target.IsEmpty || target[0] != '/')
        {
            return false;
        }

        var fragment = target.IndexOf((byte)'#');
        if (fragment >= 0)
        {
            target = target[..fragment];
        }

        var mark = target.IndexOf((byte)'?');
        var rawPath = mark < 0 ? target : target[..mark];
        query = mark < 0 ? string.Empty : Encoding.UTF8.GetString(target[(mark + 1)..]);
        path = QueryString.TryUnescape(Encoding.UTF8.GetString(rawPath), plusIsSpace: false);
        return path is not null;
    }

    private static bool ParseHeader(ReadOnlySpan<byte> line, ref bool close, ref bool keepAlive, ref bool hasBody, ref long? contentLength, out HttpError error)
    {
        error = default;
        var colon = line.IndexOf((byte)':');

        // No name, a folded continuation line, or whitespace before the colon: all refused by RFC 9112 §5.
        if (colon <= 0 || line[..colon].ContainsAnyExcept(TokenBytes))
        {
            return Reject(out error, "malformed header field");
        }

        var name = line[..colon];
        var value = line[(colon + 1)..].Trim(" \t"u8);
        foreach (var b in value)
        {
            if ((b < 0x20 && b != '\t') || b == 0x7F)
            {
                return Reject(out error, "control character in header value");
            }
        }

        if (Ascii.EqualsIgnoreCase(name, "Connection"u8))
        {
            foreach (var range in value.Split((byte)','))
            {
                var option = value[range].Trim(" \t"u8);
                close |= Ascii.EqualsIgnoreCase(option, "close"u8);
                keepAlive |= Ascii.EqualsIgnoreCase(option, "keep-alive"u8);
            }
        }
        else if (Ascii.EqualsIgnoreCase(name, "Content-Length"u8))
        {
            if (value.IsEmpty || value.Length > 18 || value.ContainsAnyExceptInRange((byte)'0', (byte)'9'))
            {
                return Reject(out error, "invalid Content-Length");
            }

            var length = long.Parse(value, provider: System.Globalization.CultureInfo.InvariantCulture);
            if (contentLength is { } previous && previous != length)
            {
                return Reject(out error, "conflicting Content-Length");
            }

            contentLength = length;
        }
        else if (Ascii.EqualsIgnoreCase(name, "Transfer-Encoding"u8))
        {
            hasBody = true;
        }

        return true;
    }

    private static HttpParseStatus Fail(out HttpError error, string message)
    {
        error = new HttpError(400, message);
        return HttpParseStatus.Error;
    }

    private static bool Reject(out HttpError error, string message)
    {
        error = new HttpError(400, message);
        return false;
    }
}
