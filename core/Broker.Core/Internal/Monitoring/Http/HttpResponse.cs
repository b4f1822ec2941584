using System.Buffers;
using System.Globalization;
using System.IO.Pipelines;
using System.Text;

namespace Broker.Core.Internal.Monitoring.Http;

/// <summary>
/// An answer of the monitor: status, content type, body and extra header fields. The shapes follow nats-server's
/// (Go net/http): JSON with <c>Access-Control-Allow-Origin: *</c>, plain-text errors, Go's 404 text.
/// </summary>
internal sealed class HttpResponse
{
    public const string JsonContentType = "application/json";
    public const string TextContentType = "text/plain; charset=utf-8";
    public const string HtmlContentType = "text/html; charset=utf-8";

    /// <summary>The Prometheus text exposition format, version 0.0.4.</summary>
    public const string PrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

    public HttpResponse(int statusCode, string contentType, byte[] body)
    {
        StatusCode = statusCode;
        ContentType = contentType;
        Body = body;
    }

    public int StatusCode { get; }

    public string ContentType { get; }

    public byte[] Body { get; }

    /// <summary>Header fields beyond Content-Type, Content-Length, Date and Connection.</summary>
    public List<KeyValuePair<string, string>> Headers { get; } = [];

    public static HttpResponse Json(byte[] body, int statusCode = 200)
    {
        var response = new HttpResponse(statusCode, JsonContentType, body);
        response.Headers.Add(new("Access-Control-Allow-Origin", "*"));
        return response;
    }

    public static HttpResponse Text(int statusCode, string text) => new(statusCode, TextContentType, Encoding.UTF8.GetBytes(text));

    /// <summary>Go's <c>http.NotFound</c>.</summary>
    public static HttpResponse NotFound()
    {
        var response = Text(404, "404 page not found\n");
        response.Headers.Add(new("X-Content-Type-Options", "nosniff"));
        return response;
    }

    public static HttpResponse MethodNotAllowed()
    {
        var response = Text(405, "405 method not allowed\n");
        response.Headers.Add(new("Allow", "GET, HEAD"));
        return response;
    }

    /// <summary>
    /// Writes the status line, header fields and (unless <paramref name="headOnly"/>) the body. The connection field
    /// says <c>close</c> when the connection ends after this answer, <c>keep-alive</c> when an HTTP/1.0 client asked
    /// for it (HTTP/1.1 keeps alive by default and needs none).
    /// </summary>
    public void WriteTo(PipeWriter output, bool headOnly, bool close, bool keepAliveHeader = false)
    {
        var head = new StringBuilder(256);
        head.Append("HTTP/1.1 ").Append(StatusCode.ToString(CultureInfo.InvariantCulture)).Append(' ').Append(ReasonPhrase(StatusCode)).Append("\r\n");
        head.Append("Content-Type: ").Append(ContentType).Append("\r\n");
        foreach (var header in Headers)
        {
            head.Append(header.Key).Append(": ").Append(header.Value).Append("\r\n");
        }

        head.Append("Date: ").Append(DateTime.UtcNow.ToString("r", CultureInfo.InvariantCulture)).Append("\r\n");
        head.Append("Content-Length: ").Append(Body.Length.ToString(CultureInfo.InvariantCulture)).Append("\r\n");
        if (close)
        {
            head.Append("Connection: close\r\n");
        }
        else if (keepAliveHeader)
        {
            head.Append("Connection: keep-alive\r\n");
        }

        head.Append("\r\n");
        output.Write(Encoding.ASCII.GetBytes(head.ToString()));
        if (!headOnly)
        {
            output.Write(Body);
        }
    }

    private static string ReasonPhrase(int statusCode) => statusCode switch
    {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    };
}
