using Broker.Core.Internal.Jwt;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// One timer per JWT account whose claims expire (nats-server's account expiration timer): at the time in the JWT the
/// account is marked expired and <c>expired</c> is called, unless a claims update replaced that JWT since (its own
/// timer decides then). Starting a timer for an account replaces the one of its previous JWT.
/// </summary>
/// <param name="time">The clock the timers run on.</param>
/// <param name="expired">Called on a timer thread after an account is marked expired.</param>
internal sealed class AccountExpiryTimers(TimeProvider time, Action<Account> expired) : IDisposable
{
    private readonly Action<Account> onExpired = expired;
    private readonly Lock timersLock = new();
    private readonly Dictionary<Account, ITimer> timers = [];

    /// <summary>Arms the account's timer for <paramref name="claims"/>' expiry; nothing for claims that do not expire.</summary>
    public void Start(Account account, AccountClaims claims)
    {
        if (claims.Expires <= 0)
        {
            return;
        }

        var due = DateTimeOffset.FromUnixTimeSeconds(claims.Expires) - time.GetUtcNow();
        var timer = time.CreateTimer(
            static state =>
            {
                var (self, expiring, jwt) = ((AccountExpiryTimers, Account, AccountClaims))state!;

                // A claims update since replaced the JWT: its own timer decides.
                if (ReferenceEquals(expiring.Jwt?.Claims, jwt))
                {
                    expiring.MarkExpired();
                    self.onExpired(expiring);
                }
            },
            (this, account, claims),
            due < TimeSpan.Zero ? TimeSpan.Zero : due,
            Timeout.InfiniteTimeSpan);
        lock (timersLock)
        {
            // One per account: the timer of the JWT this one replaces has nothing left to do.
            if (timers.Remove(account, out var replaced))
            {
                replaced.Dispose();
            }

            timers[account] = timer;
        }
    }

    public void Dispose()
    {
        lock (timersLock)
        {
            foreach (var timer in timers.Values)
            {
                timer.Dispose();
            }

            timers.Clear();
        }
    }
}
