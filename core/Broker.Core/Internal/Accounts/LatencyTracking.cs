using System.Diagnostics;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Events;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// The latency measurement of one sampled request, kept on its route back (nats-server's response
/// <c>serviceImport</c> with <c>tracking</c>, <c>rc</c>, <c>ts</c> and <c>trackingHdr</c>): when the route was made, by
/// whom, and the tracing headers that asked for it. It reports once: the response's arrival
/// (accounts.go <c>sendTrackingLatency</c>), or the request's failure (no responder, the response threshold passed,
/// the requester's interest gone), published by the events loop on the export's results subject in the exporter.
/// </summary>
internal sealed class LatencyTracking
{
    private readonly ClientBase requestor;
    private readonly bool share;
    private readonly long startTimestamp = Stopwatch.GetTimestamp();
    private int reported;

    public LatencyTracking(ServiceLatency latency, Account exporter, ClientBase requestor, bool share, SortedDictionary<string, List<string>>? header)
    {
        Latency = latency;
        Exporter = exporter;
        this.requestor = requestor;
        this.share = share;
        Header = header;
    }

    public ServiceLatency Latency { get; }

    public Account Exporter { get; }

    /// <summary>The tracing headers that decided the sample; null when the rate did.</summary>
    public SortedDictionary<string, List<string>>? Header { get; }

    /// <summary>When the request was forwarded.</summary>
    public DateTime Started { get; } = DateTime.UtcNow;

    /// <summary>
    /// The response from <paramref name="responder"/> passes: publishes the measurement and answers true, or false when
    /// it was already reported or the responder is not a client connection (nats-server then waits for a remote
    /// measurement, which a single server never gets, and keeps the route to its threshold).
    /// </summary>
    public bool Responded(ClientBase responder)
    {
        if (Interlocked.Exchange(ref reported, 1) != 0 || responder.Kind != ClientKind.Client)
        {
            return false;
        }

        var now = Stopwatch.GetTimestamp();
        var serviceRtt = Nanoseconds(now - startTimestamp);
        var requestorInfo = RequestInfoHeader.Of(requestor, share);
        var responderInfo = RequestInfoHeader.Of(responder, detailed: true);
        var sample = new ServiceLatencyEvent(this, 200, null, requestorInfo, responderInfo, Started.AddTicks(-requestorInfo.Rtt / 100))
        {
            Service = Math.Max(0, serviceRtt - responderInfo.Rtt),
            Total = requestorInfo.Rtt + serviceRtt,
        };
        if (responderInfo.Rtt > 0)
        {
            sample.System = Nanoseconds(Stopwatch.GetTimestamp() - now);
            sample.Total += sample.System;
        }

        Publish(sample);
        return true;
    }

    /// <summary>The request failed before a response: publishes that (503, 504, 408), once.</summary>
    public void Failed(RouteFailure failure)
    {
        switch (failure)
        {
            case RouteFailure.NoDelivery:
                Failed(503, "Service Unavailable");
                break;
            case RouteFailure.Timeout:
                Failed(504, "Service Timeout");
                break;
            case RouteFailure.InterestLost:
                Failed(408, "Request Timeout");
                break;
        }
    }

    private void Failed(int status, string description)
    {
        if (Interlocked.Exchange(ref reported, 1) != 0)
        {
            return;
        }

        var requestorInfo = RequestInfoHeader.Of(requestor, share);
        Publish(new ServiceLatencyEvent(this, status, description, requestorInfo, null, Started.AddTicks(-requestorInfo.Rtt / 100)));
    }

    /// <summary>A sampled request without a reply (nats-server's <c>sendBadRequestTrackingLatency</c>): 400.</summary>
    public static void BadRequest(ServiceLatency latency, Account exporter, ClientBase requestor, bool share, SortedDictionary<string, List<string>>? header)
    {
        var tracking = new LatencyTracking(latency, exporter, requestor, share, header);
        tracking.Failed(400, "Bad Request");
    }

    private void Publish(ServiceLatencyEvent sample) => requestor.Server.Events?.Enqueue(sample);

    private static long Nanoseconds(long timestampTicks) => (long)(timestampTicks * (1_000_000_000.0 / Stopwatch.Frequency));
}

/// <summary>Why a route back goes before its response (nats-server's <c>rsiReason</c>, and the lost interest).</summary>
internal enum RouteFailure
{
    /// <summary>Removed after its response, or for no failure a sample reports.</summary>
    None,

    /// <summary>Nobody in the exporter took the request (503).</summary>
    NoDelivery,

    /// <summary>The response threshold passed (504).</summary>
    Timeout,

    /// <summary>The requester's reply subscription went away (408).</summary>
    InterestLost,
}
