using System.Text.Json;
using Broker.Core.Internal.Accounts;

namespace Broker.Core.Internal.Events;

/// <summary>
/// A service latency sample (nats-server's <c>ServiceLatency</c>, type <c>io.nats.server.metric.v1.service_latency</c>),
/// published on the export's results subject in the exporting account; durations in nanoseconds as Go writes them.
/// </summary>
internal sealed class ServiceLatencyEvent(
    LatencyTracking tracking, int status, string? description, RequestInfoHeader? requestor, RequestInfoHeader? responder, DateTime start) : SystemEvent
{
    public const string Type = "io.nats.server.metric.v1.service_latency";

    private readonly DateTime time = DateTime.UtcNow;

    public override string Subject => tracking.Latency.Results;

    public override Account? Account => tracking.Exporter;

    /// <summary>The responder's own time: from the request's forwarding to the response, less the responder's round trip.</summary>
    public long Service { get; set; }

    /// <summary>The server's own time between the response's arrival and the sample (only with a responder round trip).</summary>
    public long System { get; set; }

    public long Total { get; set; }

    public override void Write(Utf8JsonWriter writer, SystemServerInfo server)
    {
        writer.WriteStartObject();
        writer.WriteString("type", Type);
        writer.WriteString("id", EventIds.Next());
        writer.WriteString("timestamp", time);
        writer.WriteNumber("status", status);
        if (!string.IsNullOrEmpty(description))
        {
            writer.WriteString("description", description);
        }

        if (requestor is not null)
        {
            writer.WritePropertyName("requestor");
            requestor.Write(writer);
        }

        if (responder is not null)
        {
            writer.WritePropertyName("responder");
            responder.Write(writer);
        }

        if (tracking.Header is { Count: > 0 } header)
        {
            writer.WritePropertyName("header");
            writer.WriteStartObject();
            foreach (var (key, values) in header)
            {
                writer.WritePropertyName(key);
                writer.WriteStartArray();
                foreach (var value in values)
                {
                    writer.WriteStringValue(value);
                }

                writer.WriteEndArray();
            }

            writer.WriteEndObject();
        }

        writer.WriteString("start", start);
        writer.WriteNumber("service", Service);
        writer.WriteNumber("system", System);
        writer.WriteNumber("total", Total);
        writer.WriteEndObject();
    }
}
