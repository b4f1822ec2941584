using System.Text.Json;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring;
using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Core.Internal.Events;

/// <summary>
/// One event the system account publishes, captured where it happened (a connect, a close, a failed authentication)
/// and written later by the events loop, off the client's path (nats-server's <c>pubMsg</c> on its send queue).
/// </summary>
internal abstract class SystemEvent
{
    /// <summary>The subject it is published on (built when it is published, off the client's path).</summary>
    public abstract string Subject { get; }

    /// <summary>The account it is published in when not the system account (nats-server's <c>sendInternalAccountSysMsg</c>: an exporter's latency samples, a 2.10 account auth error), else null.</summary>
    public virtual Account? Account => null;

    /// <summary>A second subject the same message also goes to, or null (the older CONNS subject).</summary>
    public virtual string? AlsoSubject => null;

    /// <summary>Writes the whole JSON body; <paramref name="server"/> writes the <c>server</c> object at its place.</summary>
    public abstract void Write(Utf8JsonWriter writer, SystemServerInfo server);
}

/// <summary><c>$SYS.ACCOUNT.&lt;acc&gt;.CONNECT</c>: a client authenticated into an account other than <c>$G</c>.</summary>
internal sealed class ConnectEvent(string account, ClientInfo client) : SystemEvent
{
    public const string Type = "io.nats.server.advisory.v1.client_connect";

    private readonly DateTime time = DateTime.UtcNow;

    public override string Subject => "$SYS.ACCOUNT." + account + ".CONNECT";

    public override void Write(Utf8JsonWriter writer, SystemServerInfo server)
    {
        writer.WriteStartObject();
        writer.WriteString("type", Type);
        writer.WriteString("id", EventIds.Next());
        writer.WriteString("timestamp", time);
        server.Write(writer);
        writer.WritePropertyName("client");
        client.Write(writer);
        writer.WriteEndObject();
    }
}

/// <summary>
/// <c>$SYS.ACCOUNT.&lt;acc&gt;.DISCONNECT</c> (a client of an account other than <c>$G</c> closed) and
/// <c>$SYS.SERVER.&lt;id&gt;.CLIENT.AUTH.ERR</c> (a client failed to authenticate; and <c>$SYS.ACCOUNT.CLIENT.AUTH.ERR</c>
/// in its account, <paramref name="account"/>), which share nats-server's
/// <c>DisconnectEventMsg</c>: the client with its round trip and <c>stop</c>, <c>sent</c> is what the client sent,
/// <c>received</c> what it was sent.
/// </summary>
internal sealed class DisconnectEvent(string subject, ClientInfo client, DataCounts sent, DataCounts received, string reason, DateTime stop, Account? account = null) : SystemEvent
{
    public const string Type = "io.nats.server.advisory.v1.client_disconnect";

    public override string Subject => subject;

    public override Account? Account => account;

    public override void Write(Utf8JsonWriter writer, SystemServerInfo server)
    {
        writer.WriteStartObject();
        writer.WriteString("type", Type);
        writer.WriteString("id", EventIds.Next());
        writer.WriteString("timestamp", stop);
        server.Write(writer);
        writer.WritePropertyName("client");
        client.Write(writer);
        sent.Write(writer, "sent");
        received.Write(writer, "received");
        writer.WriteString("reason", reason);
        writer.WriteEndObject();
    }
}

/// <summary>
/// <c>$SYS.ACCOUNT.&lt;acc&gt;.SERVER.CONNS</c> and the older <c>$SYS.SERVER.ACCOUNT.&lt;acc&gt;.CONNS</c> after an account's
/// connections changed, or the answer to <c>$SYS.REQ.ACCOUNT.&lt;acc&gt;.CONNS</c> on <paramref name="reply"/>:
/// nats-server's <c>AccountNumConns</c>. The connection count is taken when the event is captured (one read), as
/// nats-server takes the account's numbers when it queues the event; the traffic, which needs a pass over the clients,
/// when it is written.
/// </summary>
internal sealed class AccountConnsEvent(Account account, MonitorEndpoints endpoints, string? reply = null) : SystemEvent
{
    public const string Type = "io.nats.server.advisory.v1.account_connections";

    private readonly DateTime time = DateTime.UtcNow;
    private readonly int connections = account.Connections;

    // The account's leaf node links (nats-server's nleafs), which count towards total_conns there.
    private readonly int leafNodes = account.SubList.Observer?.Links.Length ?? 0;

    public override string Subject => reply ?? "$SYS.ACCOUNT." + account.Name + ".SERVER.CONNS";

    public override string? AlsoSubject => reply is null ? "$SYS.SERVER.ACCOUNT." + account.Name + ".CONNS" : null;

    public override void Write(Utf8JsonWriter writer, SystemServerInfo server)
    {
        var stat = endpoints.Accounts.AccountStats([account.Name], unused: true).FirstOrDefault() ?? new() { Account = account.Name };
        writer.WriteStartObject();
        writer.WriteString("type", Type);
        writer.WriteString("id", EventIds.Next());
        writer.WriteString("timestamp", time);
        server.Write(writer);
        writer.WriteString("acc", account.Name);
        writer.WriteNumber("conns", connections);
        writer.WriteNumber("leafnodes", leafNodes);
        writer.WriteNumber("total_conns", connections + leafNodes);
        new DataCounts(stat.Sent.Messages, stat.Sent.Bytes).Write(writer, "sent");
        new DataCounts(stat.Received.Messages, stat.Received.Bytes).Write(writer, "received");
        writer.WriteNumber("slow_consumers", stat.SlowConsumers);
        writer.WriteEndObject();
    }
}

/// <summary>A message and byte count (nats-server's <c>DataStats</c>).</summary>
internal readonly record struct DataCounts(long Messages, long Bytes)
{
    public void Write(Utf8JsonWriter writer, string property)
    {
        writer.WritePropertyName(property);
        writer.WriteStartObject();
        writer.WriteNumber("msgs", Messages);
        writer.WriteNumber("bytes", Bytes);
        writer.WriteEndObject();
    }
}
