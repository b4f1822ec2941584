namespace Broker.Core;

/// <summary>
/// The HTTP monitoring endpoint (nats-server's <c>http</c>/<c>-m</c>): /varz, /connz, /subsz, /healthz, /accountz and
/// /metrics. Off unless a port is set.
/// </summary>
public sealed class MonitoringOptions
{
    /// <summary>Interface the monitoring listener binds to. Default <c>0.0.0.0</c>.</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary>Monitoring port; <see langword="null"/> disables monitoring, 0 picks a free port. Default <see langword="null"/>.</summary>
    public int? Port { get; set; }

    /// <summary>A path prefix for every endpoint (nats-server's <c>http_base_path</c>). Default empty.</summary>
    public string BasePath { get; set; } = "";

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public MonitoringOptions Clone() => (MonitoringOptions)MemberwiseClone();
}
