using System.Text;

namespace Broker.Abstractions;

/// <summary>
/// A page of the HTTP monitoring server contributed by a plugin (JetStream's <c>/jsz</c>, for example), served under
/// the monitoring base path beside <c>/varz</c> and <c>/connz</c>, counted in <c>/varz</c> <c>http_req_stats</c> and
/// listed on the index page. Register it with <c>services.AddSingleton&lt;IMonitoringEndpoint&gt;(...)</c>.
/// </summary>
/// <remarks>Called on the monitoring server's threads, possibly concurrently: implementations must be thread-safe.</remarks>
public interface IMonitoringEndpoint
{
    /// <summary>The path, starting with <c>/</c> (<c>/jsz</c>). A path the broker serves itself cannot be replaced.</summary>
    string Path { get; }

    /// <summary>The link text on the index page (<c>JetStream</c>).</summary>
    string Title { get; }

    /// <summary>Answers one GET request.</summary>
    /// <param name="query">The decoded query parameters (the first value of each name).</param>
    /// <returns>The response; a thrown exception becomes a 500 and an error log line.</returns>
    MonitoringResponse Handle(IReadOnlyDictionary<string, string> query);
}

/// <summary>The answer of an <see cref="IMonitoringEndpoint"/>.</summary>
/// <param name="StatusCode">The HTTP status code.</param>
/// <param name="ContentType">The content type.</param>
/// <param name="Body">The body.</param>
public sealed record MonitoringResponse(int StatusCode, string ContentType, ReadOnlyMemory<byte> Body)
{
    /// <summary>A JSON document (status 200 unless given), <c>application/json</c>.</summary>
    /// <param name="body">The UTF-8 JSON.</param>
    /// <param name="statusCode">The status code. Default 200.</param>
    /// <returns>The response.</returns>
    public static MonitoringResponse Json(ReadOnlyMemory<byte> body, int statusCode = 200) => new(statusCode, "application/json", body);

    /// <summary>Plain text (nats-server answers bad query values with a 400 and the error text).</summary>
    /// <param name="statusCode">The status code.</param>
    /// <param name="text">The text.</param>
    /// <returns>The response.</returns>
    public static MonitoringResponse Text(int statusCode, string text) => new(statusCode, "text/plain; charset=utf-8", Encoding.UTF8.GetBytes(text));
}

/// <summary>
/// A capability a plugin adds to the server, advertised where nats-server advertises it. Register an instance as a
/// service; the broker recognises <see cref="JetStream"/> (INFO then carries <c>"jetstream": true</c>).
/// </summary>
/// <param name="Name">The capability's name.</param>
public sealed record ServerFeature(string Name)
{
    /// <summary>JetStream is enabled: INFO says <c>"jetstream": true</c>, as nats-server's does.</summary>
    public const string JetStream = "jetstream";

    /// <summary>
    /// The JetStream domain served, in <see cref="Value"/> (nats-server's <c>jetstream { domain }</c>): INFO carries it
    /// as <c>domain</c>, and leaf node links announce it and keep requests for it from leaving the server.
    /// </summary>
    public const string JetStreamDomain = "jetstream_domain";

    /// <summary>The capability's setting, for those that have one (the domain of <see cref="JetStreamDomain"/>); default <see langword="null"/>.</summary>
    public string? Value { get; init; }
}

/// <summary>Who the server is, as INFO and the monitoring endpoints report it; the broker provides it as a service.</summary>
/// <param name="ServerId">The server id (<c>server_id</c>).</param>
/// <param name="ServerName">The server name (<c>server_name</c>; the id unless configured).</param>
public sealed record ServerIdentity(string ServerId, string ServerName);
