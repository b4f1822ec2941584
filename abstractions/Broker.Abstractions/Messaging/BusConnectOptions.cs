namespace Broker.Abstractions;

/// <summary>What a protocol adapter tells <see cref="IMessageBus.ConnectAsync"/> about one of its connections.</summary>
/// <remarks>
/// Credentials are checked as a NATS CONNECT's are, in nats-server's order: with <c>verify_and_map</c> on the
/// connection's <see cref="ITlsConnectionFeature"/> the client certificate names the user; otherwise the users list
/// (passwords plain or bcrypt), the token, or the single user; without credentials, <c>no_auth_user</c>. A value left
/// empty is taken from the connection's <see cref="TransportCredentials"/> feature (WebSocket cookies), as for NATS.
/// </remarks>
public sealed class BusConnectOptions
{
    /// <summary>The protocol name shown as <c>type</c> in <c>/connz</c>, such as <c>"mqtt"</c>. Required.</summary>
    public required string Protocol { get; init; }

    /// <summary>
    /// The client's name or id shown as <c>name</c> in <c>/connz</c> (for <c>"mqtt"</c> also as <c>mqtt_client</c>).
    /// Default <see langword="null"/>.
    /// </summary>
    public string? Name { get; init; }

    /// <summary>The user name the client sent, or <see langword="null"/>.</summary>
    public string? User { get; init; }

    /// <summary>The password the client sent, or <see langword="null"/>.</summary>
    public string? Password { get; init; }

    /// <summary>The token the client sent, or <see langword="null"/> (nats-server takes an MQTT password as the token too).</summary>
    public string? Token { get; init; }

    /// <summary>
    /// The broker user a client that sent no credentials is bound to, in place of the broker's <c>no_auth_user</c>
    /// (nats-server's <c>mqtt { no_auth_user }</c>). A name that is not among the broker's users refuses such clients.
    /// Default <see langword="null"/>: the broker's own <c>no_auth_user</c>, if any.
    /// </summary>
    public string? NoAuthUser { get; init; }

    /// <summary>Whether the client receives its own publishes on its matching subscriptions (NATS <c>echo</c>). Default <see langword="true"/>.</summary>
    public bool Echo { get; init; } = true;

    /// <summary>
    /// Whether publishes and <see cref="IBusConnection.WriteOutput{TState}"/> wait for
    /// <see cref="IBusClient.FlushAsync"/> instead of flushing per call, so everything one read of the connection
    /// produced goes out in one flush per receiving connection, as for a NATS connection. Default <see langword="false"/>.
    /// </summary>
    public bool DeferFlush { get; init; }

    /// <summary>
    /// Whether the adapter has checked the credentials itself, against authorization of its own (as nats-server's
    /// <c>mqtt { authorization { } }</c> replaces the server's for MQTT clients): the broker's users are not consulted,
    /// the client has full permissions, and <see cref="User"/> is only shown in <c>/connz</c>. Default <see langword="false"/>.
    /// </summary>
    public bool AuthenticatedByAdapter { get; init; }

    /// <summary>
    /// The account a client the adapter vouches for (<see cref="AuthenticatedByAdapter"/>) is put in (since contract
    /// 1.3). Used only with <see cref="AuthenticatedByAdapter"/>: otherwise the account of the user the credentials
    /// authenticate decides, as for a NATS client (users of <c>accounts { A: { users } }</c> are in <c>A</c>, the
    /// top-level users in <c>$G</c>). Default <see langword="null"/>: the global account <c>$G</c>, where nats-server
    /// puts the clients of its <c>mqtt { authorization { } }</c>. <see cref="IMessageBus.ConnectAsync"/> throws
    /// <see cref="ArgumentException"/> for a name no account has.
    /// </summary>
    public string? Account { get; init; }
}
