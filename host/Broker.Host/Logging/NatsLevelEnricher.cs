using Serilog.Core;
using Serilog.Events;

namespace Broker.Host.Logging;

/// <summary>
/// Adds the nats-server spelling of the level (<c>INF</c>, <c>DBG</c>, <c>TRC</c>, <c>WRN</c>, <c>ERR</c>,
/// <c>FTL</c>) so log lines read like nats-server's; Serilog's own <c>{Level:u3}</c> would print <c>VRB</c> for trace.
/// </summary>
internal sealed class NatsLevelEnricher : ILogEventEnricher
{
    /// <summary>The property the output template refers to.</summary>
    public const string PropertyName = "NatsLevel";

    // One property per level, created once: enriching must not allocate per event.
    private static readonly LogEventProperty[] Properties =
    [
        Create("TRC"), Create("DBG"), Create("INF"), Create("WRN"), Create("ERR"), Create("FTL"),
    ];

    public void Enrich(LogEvent logEvent, ILogEventPropertyFactory propertyFactory)
    {
        ArgumentNullException.ThrowIfNull(logEvent);
        logEvent.AddPropertyIfAbsent(Properties[(int)logEvent.Level]);
    }

    private static LogEventProperty Create(string text) => new(PropertyName, new ScalarValue(text));
}
