namespace Broker.Core;

/// <summary>
/// The HTTP monitoring endpoint (nats-server's <c>http</c>/<c>-m</c>): /varz, /connz, /subsz, /healthz, /accountz and
/// /metrics. Off unless a port is set. It is served by a listener named <see cref="BrokerServer.MonitorListenerName"/>
/// on the in-box tcp transport, so <see cref="BrokerServer.GetEndPoint"/> gives its bound port.
/// </summary>
public sealed class MonitoringOptions
{
    private static readonly System.Buffers.SearchValues<char> InvalidPathCharacters = System.Buffers.SearchValues.Create("?# \t\r\n");

    /// <summary>Interface the monitoring listener binds to. Default <c>0.0.0.0</c>.</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary>Monitoring port; <see langword="null"/> disables monitoring, 0 picks a free port. Default <see langword="null"/>.</summary>
    public int? Port { get; set; }

    /// <summary>A path prefix for every endpoint (nats-server's <c>http_base_path</c>). Default empty.</summary>
    public string BasePath { get; set; } = "";

    /// <summary>
    /// How long a client may take to send a request's line and headers once it started sending it; the connection is
    /// closed after that (Go's <c>ReadHeaderTimeout</c> of nats-server's monitor). Default 5 seconds.
    /// </summary>
    public TimeSpan RequestHeadersTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>How long a kept-alive connection may stay idle between requests before it is closed. Default 2 minutes.</summary>
    public TimeSpan KeepAliveTimeout { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary>
    /// Names of <see cref="Broker.Abstractions.IConnectionMiddleware"/> run on each monitoring connection, in order:
    /// the TLS middleware here makes the endpoint HTTPS (nats-server's <c>https</c>). Default none.
    /// </summary>
    public IList<string> Middleware { get; set; } = [];

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public MonitoringOptions Clone()
    {
        var copy = (MonitoringOptions)MemberwiseClone();
        copy.Middleware = [.. Middleware];
        return copy;
    }

    /// <summary>Checks the settings.</summary>
    /// <exception cref="InvalidOperationException">A setting is out of range; the message names it.</exception>
    public void Validate()
    {
        if (Port is < 0 or > 65535)
        {
            throw new InvalidOperationException($"http_port: {Port} is not a valid port number");
        }

        if (RequestHeadersTimeout <= TimeSpan.Zero || KeepAliveTimeout <= TimeSpan.Zero)
        {
            throw new InvalidOperationException("monitoring timeouts must be positive");
        }

        if (BasePath.AsSpan().IndexOfAny(InvalidPathCharacters) >= 0)
        {
            throw new InvalidOperationException($"http_base_path: '{BasePath}' is not a valid path");
        }
    }

    /// <summary>The base path with one leading slash and no trailing one; empty for the root.</summary>
    internal string NormalizedBasePath
    {
        get
        {
            var path = BasePath.Trim().Trim('/');
            return path.Length == 0 ? string.Empty : "/" + path;
        }
    }
}
