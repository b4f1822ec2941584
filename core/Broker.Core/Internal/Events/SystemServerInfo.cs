using System.Text.Json;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Events;

/// <summary>
/// The <c>server</c> object of every <c>$SYS</c> message (nats-server's <c>ServerInfo</c>): name, host, id, version,
/// a sequence number the system account's messages share, JetStream, and when it was written. Cluster, domain and
/// tags are left out, as Go's <c>omitempty</c> leaves them for a server that has none.
/// </summary>
internal sealed class SystemServerInfo(BrokerCore core)
{
    private long seq;

    /// <summary>Writes <c>"server":{...}</c> with the next sequence number.</summary>
    public void Write(Utf8JsonWriter writer)
    {
        writer.WritePropertyName("server");
        WriteObject(writer);
    }

    /// <summary>Writes the object alone (the SHUTDOWN event's whole body).</summary>
    public void WriteObject(Utf8JsonWriter writer)
    {
        writer.WriteStartObject();
        writer.WriteString("name", core.ServerName);
        writer.WriteString("host", core.Options.Host);
        writer.WriteString("id", core.ServerId);
        writer.WriteString("ver", ServerInfo.CompatibleServerVersion);
        writer.WriteNumber("seq", Interlocked.Increment(ref seq));
        writer.WriteBoolean("jetstream", core.JetStreamEnabled);
        writer.WriteString("time", DateTime.UtcNow);
        writer.WriteEndObject();
    }
}
