namespace Broker.Abstractions;

/// <summary>
/// The broker's subject space seen from inside the process: plugins and embedding applications open
/// clients on it to publish and subscribe exactly as NATS connections do.
/// </summary>
public interface IMessageBus
{
    /// <summary>
    /// Opens an in-process client for the plugin's own work (a service, JetStream's stream ingest). It has full
    /// permissions within its account (<see cref="BusClientOptions.Account"/>, <c>$G</c> by default) and, like
    /// nats-server's internal clients, is not listed in <c>/connz</c> nor counted as a connection, of the server or
    /// of its account.
    /// </summary>
    /// <param name="options">Client options; defaults when <see langword="null"/>.</param>
    /// <returns>The client; dispose it to remove its subscriptions.</returns>
    /// <exception cref="ArgumentException"><see cref="BusClientOptions.Account"/> names no account.</exception>
    IBusClient CreateClient(BusClientOptions? options = null);

    /// <summary>
    /// Authenticates one connection of a protocol adapter with the broker's own authorization (the users, passwords,
    /// bcrypt hashes, token, <c>no_auth_user</c> and <c>verify_and_map</c> a NATS client meets) and opens a client bound
    /// to that user and in that user's account (since contract 1.3; <see cref="BusConnectOptions.Account"/> when the
    /// adapter vouches for the client): listed in <c>/connz</c>, counted in <c>/varz</c> and against its account's
    /// <c>max_connections</c>, and obeying the user's permissions, also after a configuration reload changes them (a
    /// reload that moves the user to another account, or removes the account, closes the client, as nats-server
    /// closes such NATS clients). A bcrypt check runs on the calling thread (about 100 ms at cost 11).
    /// </summary>
    /// <param name="connection">The adapter's connection: its endpoints, TLS feature and output are used.</param>
    /// <param name="options">The protocol name, client name and credentials.</param>
    /// <param name="cancellationToken">Cancels the authentication.</param>
    /// <returns>The client, or the reason the connection is refused (which a NATS client would get as <c>-ERR</c>).</returns>
    /// <exception cref="ArgumentException"><see cref="BusConnectOptions.Protocol"/> is empty, or
    /// <see cref="BusConnectOptions.AuthenticatedByAdapter"/> is set and <see cref="BusConnectOptions.Account"/> names no account.</exception>
    /// <exception cref="ObjectDisposedException">The broker has stopped.</exception>
    ValueTask<BusConnectResult> ConnectAsync(TransportConnection connection, BusConnectOptions options, CancellationToken cancellationToken = default);
}
