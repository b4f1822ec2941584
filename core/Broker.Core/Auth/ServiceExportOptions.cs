namespace Broker.Core.Auth;

/// <summary>
/// One service export of an account (nats-server's <c>exports: [{ service: "svc.>", accounts: [B], response_type:
/// stream, response_threshold: "10s" }]</c>): requests other accounts publish on an import of <see cref="Subject"/>
/// reach this account's subscribers, with a reply that routes their responses back.
/// </summary>
public sealed class ServiceExportOptions
{
    /// <summary>The default <see cref="ResponseThreshold"/>: 2 minutes (nats-server's <c>DEFAULT_SERVICE_EXPORT_RESPONSE_THRESHOLD</c>).</summary>
    public static readonly TimeSpan DefaultResponseThreshold = TimeSpan.FromMinutes(2);

    /// <summary>The exported subject; may hold wildcards. Required.</summary>
    public string Subject { get; set; } = "";

    /// <summary>
    /// The accounts allowed to import the service. Default <see langword="null"/>: a public export, which every account
    /// may import (as nats-server when <c>accounts</c> is absent).
    /// </summary>
    public IList<string>? Accounts { get; set; }

    /// <summary>How many responses a request gets. Default <see cref="ServiceResponseType.Singleton"/>.</summary>
    public ServiceResponseType ResponseType { get; set; } = ServiceResponseType.Singleton;

    /// <summary>
    /// How long a route back to a requester waits for a response before it is removed. Default
    /// <see cref="DefaultResponseThreshold"/> (2 minutes); must be positive.
    /// </summary>
    public TimeSpan ResponseThreshold { get; set; } = DefaultResponseThreshold;

    /// <summary>
    /// Latency tracking of the service's requests (nats-server's <c>latency</c>). Default <see langword="null"/>: not
    /// tracked.
    /// </summary>
    public ServiceLatencyOptions? Latency { get; set; }

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public ServiceExportOptions Clone() => new()
    {
        Subject = Subject,
        Accounts = Accounts is null ? null : [.. Accounts],
        ResponseType = ResponseType,
        ResponseThreshold = ResponseThreshold,
        Latency = Latency?.Clone(),
    };
}
