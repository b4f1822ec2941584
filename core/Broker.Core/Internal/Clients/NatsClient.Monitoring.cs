using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>What monitoring and lame duck mode need from a connection: its state for /connz, the LDM INFO, a close.</summary>
internal sealed partial class NatsClient
{
    /// <summary>The CONNECT <c>protocol</c>: 1 means the client understands asynchronous INFO (cluster updates, LDM).</summary>
    public int Protocol => options.Protocol;

    /// <summary>When the client last sent anything, as <see cref="Environment.TickCount64"/>.</summary>
    public long LastActivityTick => keepAlive.LastInputTick;

    /// <summary>/connz <c>type</c>.</summary>
    public string ConnectionType => NatsProtocolHandler.ProtocolName;

    /// <summary>Why the connection closed, in nats-server's words; empty while open.</summary>
    public string ClosedReasonText => Reason.ToText();

    /// <summary>Bytes queued for the client and not yet sent, when the transport can tell; otherwise 0.</summary>
    public long PendingBytes => transport.PendingBytes;

    /// <summary>What INFO says about this connection's transport (see <see cref="ClientTransport.Describe"/>).</summary>
    public void DescribeTransport(ServerInfo info) => transport.Describe(info);

    /// <summary>Sends INFO with <c>ldm:true</c> to a client that announced protocol 1, as nats-server does.</summary>
    public void SendLameDuckInfo()
    {
        if (Protocol >= 1 && !IsClosed)
        {
            SendProtocol(Server.CreateClientInfo(this, lameDuckMode: true), flushNow: true);
        }
    }

    /// <summary>Sends the current INFO (the cluster's URLs changed) if the client understands asynchronous INFO.</summary>
    public void SendAsyncInfo()
    {
        if (Protocol >= 1 && !IsClosed)
        {
            SendProtocol(Server.CreateClientInfo(this), flushNow: true);
        }
    }

    /// <summary>Closes the connection gracefully with the reason "Server Shutdown" (lame duck mode).</summary>
    public void CloseForShutdown() => BeginClose(CloseReason.ServerShutdown, default);

    /// <summary>The round-trip time measured by the server's PINGs, in nanoseconds (0 until measured).</summary>
    protected internal override long RoundTripNanoseconds => keepAlive.RoundTrip.Ticks * 100;

    /// <summary>The connection's details for a <c>share</c> service import: its host, library and version too.</summary>
    protected internal override void DescribeForRequestInfo(Accounts.RequestInfoHeader info)
    {
        base.DescribeForRequestInfo(info);
        info.Host = RemoteEndPoint?.Address.ToString();
        info.Lang = Lang;
        info.Version = ClientVersion;
    }
}
