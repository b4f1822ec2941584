using System.Diagnostics.Metrics;

namespace Broker.Core.Internal.Monitoring.Metrics;

internal enum MetricType
{
    /// <summary>A cumulative count since start (Prometheus counter, .NET observable counter).</summary>
    Counter,

    /// <summary>A value that goes up and down (Prometheus gauge, .NET observable gauge).</summary>
    Gauge,
}

/// <summary>
/// One broker metric. The same <see cref="Observe"/> callback feeds the <c>Broker</c> meter's instrument and the
/// /metrics text, so the two always agree.
/// </summary>
/// <param name="Name">The Prometheus name (<c>broker_*</c>, counters end in <c>_total</c>).</param>
/// <param name="InstrumentName">The .NET instrument name (OpenTelemetry style, dotted).</param>
/// <param name="Unit">The UCUM unit of the instrument (<c>By</c>, <c>s</c>, <c>{connection}</c>).</param>
/// <param name="Help">One line of description, for HELP and the instrument description.</param>
/// <param name="Type">Counter or gauge.</param>
/// <param name="Observe">Reads the current measurements (one per label set).</param>
internal sealed record MetricDefinition(
    string Name,
    string InstrumentName,
    string Unit,
    string Help,
    MetricType Type,
    Func<IEnumerable<Measurement<double>>> Observe);
