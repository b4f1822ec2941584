using Broker.Core.Internal.Auth;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Operator mode on one connection: its user JWT, the expiry of its authentication and live claims updates of its
/// account are <see cref="UserClaims"/>'s; the server reaches them through these members.
/// </summary>
internal sealed partial class NatsClient
{
    /// <summary>What the user's JWT gave this connection, or null outside operator mode.</summary>
    public JwtUser? JwtUser => claims.User;

    /// <summary>The connection type a user JWT's <c>allowed_connection_types</c> names: <c>WEBSOCKET</c> on the WebSocket listener.</summary>
    public string JwtConnectionType => transport.Listener is { Name: not BrokerServer.ClientListenerName } ? "WEBSOCKET" : "STANDARD";

    /// <summary>Closes the connection because its account's JWT expired.</summary>
    public void CloseForAccountExpired() => claims.CloseForAccountExpired();

    /// <summary>Closes the connection because a claims update lowered its account's connection limit below it.</summary>
    public void CloseForAccountConnections() => claims.CloseForAccountConnections();

    /// <summary>Checks the connection against its account's JWT just taken; closes it when it no longer fits.</summary>
    public void CheckClaimsUpdate() => claims.CheckClaimsUpdate();
}
