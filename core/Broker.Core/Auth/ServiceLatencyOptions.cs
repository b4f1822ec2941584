namespace Broker.Core.Auth;

/// <summary>
/// Latency tracking of a service export (nats-server's <c>latency: { sampling: 50, subject: "lat.results" }</c>): for
/// sampled requests the broker publishes a <c>io.nats.server.metric.v1.service_latency</c> message on
/// <see cref="Subject"/> in the exporting account once the response passes (or the request fails). Only singleton exports
/// can be tracked, and only with a system account.
/// </summary>
public sealed class ServiceLatencyOptions
{
    /// <summary>The <see cref="Sampling"/> that samples only requests carrying tracing headers (nats-server's <c>headers</c>).</summary>
    public const int HeadersOnly = 0;

    /// <summary>The subject the results are published on, in the exporting account; a literal subject. Required.</summary>
    public string Subject { get; set; } = "";

    /// <summary>
    /// The percentage of requests sampled, 1-100, or <see cref="HeadersOnly"/>; a request whose tracing headers
    /// (<c>traceparent</c>, <c>uber-trace-id</c>, <c>b3</c>, <c>X-B3-*</c>) ask for sampling is sampled whatever the rate.
    /// Default 100 (every request).
    /// </summary>
    public int Sampling { get; set; } = 100;

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public ServiceLatencyOptions Clone() => new() { Subject = Subject, Sampling = Sampling };
}
