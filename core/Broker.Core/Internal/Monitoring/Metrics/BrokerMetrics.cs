using System.Diagnostics.Metrics;

namespace Broker.Core.Internal.Monitoring.Metrics;

/// <summary>
/// The broker's metrics, defined once (<c>BrokerMetrics.Definitions.cs</c>) and published two ways from the same
/// callbacks: as observable instruments of a <see cref="Meter"/> named <see cref="BrokerServer.MeterName"/> (for
/// OpenTelemetry's <c>AddMeter("Broker")</c> or any <see cref="MeterListener"/>), and as Prometheus text on /metrics.
/// </summary>
internal sealed partial class BrokerMetrics : IDisposable
{
    private readonly BrokerCore core;

    public BrokerMetrics(BrokerCore core)
    {
        this.core = core;
        Definitions = CreateDefinitions();

        // The server id tells apart the meters of several brokers in one process (tests, embedding).
        Meter = new Meter(new MeterOptions(BrokerServer.MeterName)
        {
            Version = BrokerServer.Version,
            Tags = [new("server_id", core.ServerId)],
        });
        foreach (var definition in Definitions)
        {
            if (definition.Type == MetricType.Counter)
            {
                Meter.CreateObservableCounter(definition.InstrumentName, definition.Observe, definition.Unit, definition.Help);
            }
            else
            {
                Meter.CreateObservableGauge(definition.InstrumentName, definition.Observe, definition.Unit, definition.Help);
            }
        }
    }

    public Meter Meter { get; }

    public IReadOnlyList<MetricDefinition> Definitions { get; }

    /// <summary>CPU and memory of the process, shared with /varz.</summary>
    public ProcessUsage Process { get; } = new();

    /// <summary>Requests per monitoring endpoint, shared with /varz.</summary>
    public HttpRequestStatistics HttpRequests { get; } = new();

    /// <summary>The /metrics body.</summary>
    public byte[] WritePrometheusText() => PrometheusText.Write(Definitions);

    public void Dispose() => Meter.Dispose();
}
