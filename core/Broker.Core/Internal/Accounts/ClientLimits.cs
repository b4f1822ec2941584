namespace Broker.Core.Internal.Accounts;

/// <summary>
/// The limits a client of an account works under: the lower of the server's and the account's where the account
/// sets one (nats-server <c>applyAccountLimits</c>). Read from the options and the account's limits in force, so a
/// reload changing either applies from the client's next read (payload) or subscription.
/// </summary>
internal static class ClientLimits
{
    /// <summary>The largest payload the client may publish.</summary>
    public static int MaxPayload(BrokerOptions options, Account account)
    {
        var accountLimit = account.Limits.MaxPayload;
        return accountLimit >= 0 && accountLimit < options.MaxPayload ? accountLimit : options.MaxPayload;
    }

    /// <summary>Whether the account lowers the payload limit below the server's, which INFO at connect time announced.</summary>
    public static bool LowersMaxPayload(BrokerOptions options, Account account) => MaxPayload(options, account) != options.MaxPayload;

    /// <summary>Most subscriptions per connection, 0 for none (as <see cref="BrokerOptions.MaxSubscriptions"/>).</summary>
    public static int MaxSubscriptions(BrokerOptions options, Account account)
    {
        var accountLimit = account.Limits.MaxSubscriptions;
        var serverLimit = options.MaxSubscriptions;
        return accountLimit > 0 && (serverLimit == 0 || accountLimit < serverLimit) ? accountLimit : serverLimit;
    }
}
