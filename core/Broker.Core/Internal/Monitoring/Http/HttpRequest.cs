namespace Broker.Core.Internal.Monitoring.Http;

/// <summary>A parsed HTTP/1.x request head; the monitor ignores request bodies.</summary>
internal sealed class HttpRequest
{
    public required string Method { get; init; }

    /// <summary>The percent-decoded path, always starting with '/'.</summary>
    public required string Path { get; init; }

    /// <summary>The query string as sent (without '?'), still encoded.</summary>
    public required string RawQuery { get; init; }

    /// <summary>Whether the connection stays open after the answer (HTTP/1.1 default, HTTP/1.0 with keep-alive).</summary>
    public bool KeepAlive { get; init; }

    /// <summary>Whether the request is HTTP/1.0, whose clients close unless the answer says keep-alive.</summary>
    public bool IsHttp10 { get; init; }

    /// <summary>Whether a body follows the head (Content-Length above 0 or any Transfer-Encoding).</summary>
    public bool HasBody { get; init; }

    public bool IsHead => Method == "HEAD";
}

/// <summary>Why a request could not be parsed: the status to answer with and a short text for the body.</summary>
internal readonly record struct HttpError(int StatusCode, string Message);
