using System.Text.Json;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring;

namespace Broker.Core.Internal.Events;

/// <summary>
/// The server's statistics (nats-server's <c>ServerStatsMsg</c>): <c>{"server":{..},"statsz":{..}}</c>, published on
/// <c>$SYS.SERVER.&lt;id&gt;.STATSZ</c> and sent as the answer to <c>$SYS.REQ.SERVER.PING</c> and <c>.STATSZ</c>. The
/// numbers are /varz's, read when it is written.
/// </summary>
internal sealed class StatszEvent(string subject, MonitorEndpoints endpoints, BrokerCore core) : SystemEvent
{
    public override string Subject => subject;

    public override void Write(Utf8JsonWriter writer, SystemServerInfo server)
    {
        var varz = endpoints.CreateVarz();
        writer.WriteStartObject();
        server.Write(writer);
        writer.WritePropertyName("statsz");
        writer.WriteStartObject();
        writer.WriteString("start", varz.Start);
        writer.WriteNumber("mem", varz.Mem);
        writer.WriteNumber("cores", varz.Cores);
        writer.WriteNumber("cpu", varz.Cpu);
        writer.WriteNumber("connections", varz.Connections);
        writer.WriteNumber("total_connections", varz.TotalConnections);
        writer.WriteNumber("active_accounts", ActiveAccounts());
        writer.WriteNumber("subscriptions", varz.Subscriptions);
        new DataCounts(varz.OutMsgs, varz.OutBytes).Write(writer, "sent");
        new DataCounts(varz.InMsgs, varz.InBytes).Write(writer, "received");
        writer.WriteNumber("slow_consumers", varz.SlowConsumers);
        writer.WriteNumber("active_servers", 1);
        writer.WriteEndObject();
        writer.WriteEndObject();
    }

    // Accounts with at least one connection (nats-server's activeAccounts).
    private int ActiveAccounts()
    {
        var active = new HashSet<Accounts.Account>();
        foreach (var (_, client) in core.Clients)
        {
            if (client is IClientConnection)
            {
                active.Add(client.Account);
            }
        }

        return active.Count;
    }
}

/// <summary><c>$SYS.SERVER.&lt;id&gt;.SHUTDOWN</c>: the server info alone, as nats-server's <c>sendShutdownEvent</c> sends it.</summary>
internal sealed class ShutdownEvent(string serverId) : SystemEvent
{
    public override string Subject { get; } = "$SYS.SERVER." + serverId + ".SHUTDOWN";

    public override void Write(Utf8JsonWriter writer, SystemServerInfo server) => server.WriteObject(writer);
}
