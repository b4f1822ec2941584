using Broker.Abstractions;
using Broker.Core.Internal.Monitoring.Http;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// The <c>"http-monitor"</c> protocol: the monitoring endpoints over a minimal HTTP/1.1 server. It is served by an
/// ordinary listener, so HTTPS is the TLS middleware on that listener and nothing here.
/// </summary>
internal sealed class MonitorProtocolHandler(MonitorRouter router, MonitoringOptions options, ILogger logger) : IProtocolHandler
{
    public const string ProtocolName = "http-monitor";

    public string Protocol => ProtocolName;

    public Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
        => new HttpConnection(connection, router, options, logger).RunAsync(cancellationToken);
}
