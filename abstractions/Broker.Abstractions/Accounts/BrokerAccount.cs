namespace Broker.Abstractions;

/// <summary>
/// One account of the broker, as <see cref="IAccountDirectory"/> reports it (since contract 1.3). Later contract
/// versions add properties; two instances are equal when every property is.
/// </summary>
public sealed record BrokerAccount
{
    /// <summary>The name of the global account, where clients of no configured account are (nats-server's <c>$G</c>).</summary>
    public const string GlobalName = "$G";

    /// <summary>Creates the description of an account.</summary>
    /// <param name="name">The account's name.</param>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    public BrokerAccount(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        Name = name;
    }

    /// <summary>The account's name (<see cref="BusClientOptions.Account"/> takes it); <c>$G</c> for the global account.</summary>
    public string Name { get; }

    /// <summary>Whether this is the global account <c>$G</c>.</summary>
    public bool IsGlobal => Name == GlobalName;

    /// <summary>
    /// Whether this is the system account (nats-server's <c>system_account</c>, <c>$SYS</c> by default), where the broker
    /// answers <c>$SYS.REQ.&gt;</c> requests and publishes its events. Default <see langword="false"/>.
    /// </summary>
    public bool IsSystem { get; init; }

    /// <summary>
    /// The account's JetStream limits when its configuration enables JetStream for it (<c>jetstream: enabled</c> or a
    /// block of limits); null when it does not (default). Always null for <c>$G</c>, which has no configuration of its
    /// own: the JetStream plugin gives <c>$G</c> JetStream, with the server's limits, only when no other account is
    /// configured, as nats-server does.
    /// </summary>
    public AccountJetStreamLimits? JetStream { get; init; }
}
