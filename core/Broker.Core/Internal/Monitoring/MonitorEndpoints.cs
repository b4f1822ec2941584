using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring.Http;
using Broker.Core.Internal.Monitoring.Metrics;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// The monitoring endpoints, one partial file each: /varz (<c>.Varz.cs</c>), /connz (<c>.Connz.cs</c>), /subsz
/// (<c>.Subsz.cs</c>), /leafz (<c>.Leafz.cs</c>), /healthz and the index page (<c>.Health.cs</c>), /metrics (here); /accountz
/// and /accstatz are the collaborating <see cref="AccountEndpoints"/> (<see cref="Accounts"/>). Each takes the
/// decoded query and returns a complete answer; bad query values give a 400 with nats-server's wording.
/// </summary>
internal sealed partial class MonitorEndpoints
{
    private readonly BrokerCore core;
    private readonly BrokerMetrics metrics;
    private readonly ILogger logger;

    public MonitorEndpoints(BrokerCore core, BrokerMetrics metrics, ILogger logger)
    {
        this.core = core;
        this.metrics = metrics;
        this.logger = logger;
        Accounts = new AccountEndpoints(core);
    }

    /// <summary>/accountz and /accstatz, and the account statistics the system account's requests and events report.</summary>
    public AccountEndpoints Accounts { get; }

    /// <summary>/metrics: the Prometheus text exposition of the same instruments the "Broker" meter publishes.</summary>
    public HttpResponse Metrics()
    {
        return new HttpResponse(200, HttpResponse.PrometheusContentType, metrics.WritePrometheusText());
    }

    /// <summary>
    /// Open connections: NATS clients and adapters' connections. Plain in-process clients are not connections and are
    /// not listed, as nats-server keeps its internal clients out of /connz.
    /// </summary>
    private List<ClientBase> OpenConnections()
    {
        var list = new List<ClientBase>(core.Clients.Count);
        foreach (var client in core.Clients.Values)
        {
            if (client is IClientConnection)
            {
                list.Add(client);
            }
        }

        return list;
    }

    internal static HttpResponse BadRequest(string message) => HttpResponse.Text(400, message);
}
