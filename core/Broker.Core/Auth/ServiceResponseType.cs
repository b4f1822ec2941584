namespace Broker.Core.Auth;

/// <summary>
/// How many responses a service export's requests get (nats-server's <c>response_type</c>): it decides how long the
/// route back to the requester lives.
/// </summary>
public enum ServiceResponseType
{
    /// <summary>One response: the route back is removed after the first (config <c>singleton</c>, the default).</summary>
    Singleton,

    /// <summary>
    /// Several responses: the route back lives until <see cref="ServiceExportOptions.ResponseThreshold"/> passes without
    /// a response, or an empty message ends it (config <c>stream</c>).
    /// </summary>
    Streamed,

    /// <summary>One response in several messages; kept as <see cref="Streamed"/> (config <c>chunked</c>).</summary>
    Chunked,
}
