using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The connection's side of its deadlines: the keep-alive (<see cref="KeepAlive"/>, nats-server <c>processPingTimer</c>)
/// pings and closes through <see cref="IKeepAliveConnection"/>, the authentication deadline
/// (<see cref="ClientAuthentication"/>, nats-server <c>authTimeout</c>) closes through <see cref="OnAuthTimeout"/>.
/// </summary>
internal sealed partial class NatsClient
{
    /// <summary>Round-trip time measured by the last PING/PONG exchange, or zero.</summary>
    public TimeSpan RoundTrip => keepAlive.RoundTrip;

    TimeSpan IKeepAliveConnection.PingInterval => Server.Options.PingInterval;

    int IKeepAliveConnection.MaxPingsOutstanding => Server.Options.MaxPingsOutstanding;

    void IKeepAliveConnection.SendPing() => SendProtocol(ServerMessages.Ping, flushNow: true);

    void IKeepAliveConnection.CloseStale()
    {
        Interlocked.Increment(ref Server.Statistics.StaleConnections);
        ClientLog.StaleConnection(logger, this);
        BeginClose(CloseReason.StaleConnection, ServerMessages.ErrStaleConnection);
    }

    internal void StartTimers()
    {
        authentication.StartDeadline(Server.Options.Authorization, OnAuthTimeout);
        keepAlive.Start();
    }

    private void OnAuthTimeout()
    {
        if (IsClosed)
        {
            return;
        }

        ClientLog.AuthenticationTimeout(logger, this);
        BeginClose(CloseReason.AuthenticationTimeout, ServerMessages.ErrAuthenticationTimeout);
    }
}
