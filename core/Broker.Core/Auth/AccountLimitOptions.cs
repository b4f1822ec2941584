namespace Broker.Core.Auth;

/// <summary>
/// Limits of one account, as nats-server's account <c>limits { }</c> block. A value of -1 (the default of each)
/// means the account adds no limit of its own; the server's limits still apply.
/// </summary>
public sealed class AccountLimitOptions
{
    /// <summary>Most connections of the account at once (<c>max_connections</c>). Default -1.</summary>
    public int MaxConnections { get; set; } = -1;

    /// <summary>Most subscriptions per connection of the account (<c>max_subscriptions</c>). Default -1.</summary>
    public int MaxSubscriptions { get; set; } = -1;

    /// <summary>Largest payload a connection of the account may publish (<c>max_payload</c>). Default -1.</summary>
    public int MaxPayload { get; set; } = -1;

    /// <summary>
    /// Most leaf node links of the account (<c>max_leafnodes</c>): a spoke beyond it is refused by the hub, as
    /// nats-server's <c>registerWithAccount</c>. Default -1 (no limit).
    /// </summary>
    public int MaxLeafNodes { get; set; } = -1;

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public AccountLimitOptions Clone() => (AccountLimitOptions)MemberwiseClone();
}
