namespace Broker.Abstractions;

/// <summary>The outcome of <see cref="IMessageBus.ConnectAsync"/>: a connected client, or why there is none.</summary>
public sealed class BusConnectResult
{
    private BusConnectResult(IBusConnection? connection, BusConnectError error, string? errorMessage)
    {
        Connection = connection;
        Error = error;
        ErrorMessage = errorMessage;
    }

    /// <summary>The client, or <see langword="null"/> when the connection was refused.</summary>
    public IBusConnection? Connection { get; }

    /// <summary>Whether the connection was accepted.</summary>
    public bool Succeeded => Connection is not null;

    /// <summary>Why the connection was refused; <see cref="BusConnectError.None"/> when it was accepted.</summary>
    public BusConnectError Error { get; }

    /// <summary>What a NATS client would have been told (<c>Authorization Violation</c>, <c>maximum connections exceeded</c>), or <see langword="null"/>.</summary>
    public string? ErrorMessage { get; }

    /// <summary>An accepted connection.</summary>
    /// <param name="connection">The client.</param>
    /// <returns>The result.</returns>
    public static BusConnectResult Success(IBusConnection connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        return new BusConnectResult(connection, BusConnectError.None, null);
    }

    /// <summary>A refused connection.</summary>
    /// <param name="error">Why.</param>
    /// <param name="message">The NATS error text.</param>
    /// <returns>The result.</returns>
    public static BusConnectResult Failure(BusConnectError error, string message)
    {
        ArgumentNullException.ThrowIfNull(message);
        return error == BusConnectError.None
            ? throw new ArgumentOutOfRangeException(nameof(error), error, "A failure needs a reason.")
            : new BusConnectResult(null, error, message);
    }
}

/// <summary>Why <see cref="IMessageBus.ConnectAsync"/> refused a connection.</summary>
public enum BusConnectError
{
    /// <summary>Not refused.</summary>
    None,

    /// <summary>
    /// The credentials (or their absence, or the client certificate) authenticate no user: NATS's
    /// <c>Authorization Violation</c> (MQTT: bad user name or password when credentials were given, else not authorized).
    /// </summary>
    AuthorizationViolation,

    /// <summary>
    /// <c>max_connections</c> connections are open already (MQTT: server unavailable): the server's
    /// (<see cref="BusConnectResult.ErrorMessage"/> <c>maximum connections exceeded</c>) or, since contract 1.3, those of
    /// the client's account (<c>maximum account active connections exceeded</c>).
    /// </summary>
    MaxConnectionsExceeded,
}
