using System.Net;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring.Http;
using Broker.Core.Internal.Monitoring.Metrics;
using Broker.Core.Internal.Monitoring.Models;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Monitoring;

/// <summary>/varz: identity, configuration in force, process usage and the server-wide counters.</summary>
internal sealed partial class MonitorEndpoints
{
    // Go's default TLS timeout: what nats-server reports when TLS is not configured.
    private const double DefaultTlsTimeoutSeconds = 2;

    public HttpResponse Varz()
    {
        return HttpResponse.Json(MonitorJson.Serialize(CreateVarz()));
    }

    internal Varz CreateVarz()
    {
        var options = core.Options;
        var statistics = core.Statistics;
        var now = DateTime.UtcNow;
        var client = core.FindListener(BrokerServer.ClientListenerName)?.EndPoint as IPEndPoint;
        var monitor = core.FindListener(BrokerServer.MonitorListenerName)?.EndPoint as IPEndPoint;
        var slowConsumers = Interlocked.Read(ref statistics.SlowConsumers);
        var staleConnections = Interlocked.Read(ref statistics.StaleConnections);
        var inMessages = Interlocked.Read(ref statistics.InMessages);
        var inBytes = Interlocked.Read(ref statistics.InBytes);
        var outMessages = Interlocked.Read(ref statistics.OutMessages);
        var outBytes = Interlocked.Read(ref statistics.OutBytes);
        return new Varz
        {
            ServerId = core.ServerId,
            ServerName = core.ServerName,
            Version = ServerInfo.CompatibleServerVersion,
            Go = ".NET " + Environment.Version,
            Host = options.Host,
            Port = client?.Port ?? options.Port,
            AuthRequired = core.Authenticator.AuthRequired ? true : null,
            MaxConnections = ConnectionAdmission.Effective(options.MaxConnections),
            MaxSubscriptions = options.MaxSubscriptions > 0 ? options.MaxSubscriptions : null,
            PingInterval = ToNanoseconds(options.PingInterval),
            PingMax = options.MaxPingsOutstanding,
            HttpHost = options.Monitoring.Host,
            HttpPort = monitor?.Port ?? options.Monitoring.Port ?? 0,
            HttpBasePath = options.Monitoring.BasePath,
            AuthTimeout = options.Authorization.Timeout.TotalSeconds,
            MaxControlLine = options.MaxControlLine,
            MaxPayload = options.MaxPayload,
            MaxPending = options.MaxPending,
            TlsTimeout = DefaultTlsTimeoutSeconds,
            WriteDeadline = ToNanoseconds(options.WriteDeadline),
            Start = core.StartedAt,
            Now = now,
            Uptime = GoFormat.Uptime(now - core.StartedAt),
            Mem = ProcessUsage.ResidentBytes,
            Cores = Environment.ProcessorCount,
            GoMaxProcs = Environment.ProcessorCount,
            Cpu = metrics.Process.CpuPercent(),
            Connections = core.Clients.Count,
            TotalConnections = Interlocked.Read(ref statistics.TotalConnections),
            Leafnodes = core.LeafNodes?.Links.Length ?? 0,
            Routes = core.Routes?.Routes.Length ?? 0,
            Cluster = CreateClusterVarz(),
            ConnectUrls = core.Routes is { Options.NoAdvertise: false } cluster ? cluster.Urls.Advertised : null,
            Leaf = CreateLeafVarz(),

            // Without routes, gateways or leaf nodes every message is a client message (in-process clients count as
            // clients, as nats-server counts its MQTT and WebSocket clients).
            InMsgs = inMessages,
            InBytes = inBytes,
            InClientMsgs = inMessages,
            InClientBytes = inBytes,
            OutMsgs = outMessages,
            OutBytes = outBytes,
            OutClientMsgs = outMessages,
            OutClientBytes = outBytes,
            SlowConsumers = slowConsumers,
            StaleConnections = staleConnections,
            Subscriptions = core.Accounts.SubscriptionCount(),
            HttpRequestStats = metrics.HttpRequests.Snapshot(),
            ConfigLoadTime = core.StartedAt,
            SystemAccount = core.Accounts.SystemName,
            SlowConsumerStats = new ConnectionKindCounts { Clients = slowConsumers },
            StaleConnectionStats = new ConnectionKindCounts { Clients = staleConnections },
            BrokerVersion = BrokerServer.Version,
        };
    }

    /// <summary>Go encodes a <c>time.Duration</c> in JSON as its nanoseconds.</summary>
    private static long ToNanoseconds(TimeSpan duration) => duration.Ticks * 100;
}
