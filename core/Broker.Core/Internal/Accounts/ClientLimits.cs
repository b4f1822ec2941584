namespace Broker.Core.Internal.Accounts;

/// <summary>
/// The limits a client of an account works under: the lowest of the server's, the account's where the account sets
/// one and the user's (a user JWT's <c>payload</c> and <c>subs</c>, -1 when none) (nats-server
/// <c>applyAccountLimits</c>). Read from the options and the account's limits in force, so a reload changing either
/// applies from the client's next read (payload) or subscription.
/// </summary>
internal static class ClientLimits
{
    /// <summary>The largest payload the client may publish.</summary>
    public static int MaxPayload(BrokerOptions options, Account account, int userLimit = -1)
    {
        var limit = options.MaxPayload;
        var accountLimit = account.Limits.MaxPayload;
        if (accountLimit >= 0 && accountLimit < limit)
        {
            limit = accountLimit;
        }

        return userLimit >= 0 && userLimit < limit ? userLimit : limit;
    }

    /// <summary>Whether the account (or the user) lowers the payload limit below the server's, which INFO at connect time announced.</summary>
    public static bool LowersMaxPayload(BrokerOptions options, Account account, int userLimit = -1) =>
        MaxPayload(options, account, userLimit) != options.MaxPayload;

    /// <summary>Most subscriptions per connection, 0 for none (as <see cref="BrokerOptions.MaxSubscriptions"/>).</summary>
    public static int MaxSubscriptions(BrokerOptions options, Account account, int userLimit = -1)
    {
        var limit = options.MaxSubscriptions;
        var accountLimit = account.Limits.MaxSubscriptions;
        if (accountLimit > 0 && (limit == 0 || accountLimit < limit))
        {
            limit = accountLimit;
        }

        return userLimit > 0 && (limit == 0 || userLimit < limit) ? userLimit : limit;
    }
}
