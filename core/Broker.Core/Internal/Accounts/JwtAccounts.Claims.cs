using System.Collections.Frozen;
using Broker.Core.Auth;
using Broker.Core.Internal.Accounts.Resolvers;
using Broker.Core.Internal.Jwt;

namespace Broker.Core.Internal.Accounts;

/// <summary>What <see cref="JwtAccounts.Update"/> did with a pushed account JWT.</summary>
internal enum ClaimsUpdateOutcome
{
    /// <summary>The account took the JWT: limits, revocations and JetStream limits apply from now.</summary>
    Applied,

    /// <summary>The account already has this very JWT.</summary>
    Same,

    /// <summary>The account is not in use on this server: nothing to apply.</summary>
    NotRegistered,

    /// <summary>The JWT is not valid for the account (not trusted, expired, malformed).</summary>
    Failed,
}

/// <summary>
/// Claims updates of operator mode's accounts (nats-server <c>updateAccountWithClaimJWT</c> and the resolver's
/// <c>removeCb</c>): an account in use takes a newly pushed JWT live; a deleted account is locked out and its clients
/// closed. <see cref="Updated"/> lets the broker re-check the account's connections as a reload does.
/// </summary>
internal sealed partial class JwtAccounts
{
    /// <summary>Where account JWTs come from.</summary>
    public AccountResolver Resolver { get; }

    /// <summary>The first operator's public key (nats-server <c>getOperatorKeys</c>), or null with trusted keys only.</summary>
    public string? FirstOperator { get; }

    /// <summary>Whether the first operator requires accounts to be signed by its signing keys.</summary>
    public bool StrictSigningKeyUsage { get; }

    /// <summary>The first operator's keys that may sign (its own unless strict, and its signing keys): who may delete.</summary>
    public FrozenSet<string> OperatorKeys { get; }

    /// <summary>The system account's public key, or null.</summary>
    public string? SystemAccountName => registry.System?.Name;

    /// <summary>Whether the account <paramref name="publicKey"/> is known on this server (nats-server <c>s.accounts.Load</c>).</summary>
    public bool IsRegistered(string publicKey) => registry.TryGet(publicKey, out _);

    /// <summary>The plugins applying the account's latest change (<see cref="Account.Settling"/>), or null when none is under way.</summary>
    public Task? Settling(string publicKey) => registry.TryGet(publicKey, out var account) ? account.Settling : null;

    /// <summary>
    /// Raised after an account in use took a new JWT (on the updating thread, holding no lock), so its connections are
    /// checked against the new limits and revocations.
    /// </summary>
    public event Action<Account>? Updated;

    /// <summary>
    /// Applies <paramref name="token"/> to the account <paramref name="publicKey"/> when it is in use on this server
    /// (nats-server <c>updateAccountWithClaimJWT</c>); <paramref name="error"/> is nats-server's reason when
    /// <see cref="ClaimsUpdateOutcome.Failed"/>.
    /// </summary>
    public ClaimsUpdateOutcome Update(string publicKey, string token, out string? error)
    {
        error = null;
        if (!registry.TryGet(publicKey, out var account) || (account.Jwt is null && !account.IsSystem))
        {
            return ClaimsUpdateOutcome.NotRegistered;
        }

        if (account.Jwt?.Token == token && !account.IsExpired)
        {
            return ClaimsUpdateOutcome.Same;
        }

        if (!TryVerify(publicKey, token, out var jwt, out error))
        {
            // nats-server's verifyAccountClaims answers with its sentinel, without the reason.
            if (error.StartsWith("account validation failed", StringComparison.Ordinal))
            {
                error = "account validation failed";
            }

            return ClaimsUpdateOutcome.Failed;
        }

        account.ApplyJwt(jwt);
        account.ClearExpired();
        expiry.Start(account, jwt.Claims);
        registry.NotifyChanged();
        RefreshImports(account);
        Updated?.Invoke(account);
        return ClaimsUpdateOutcome.Applied;
    }

    /// <summary>
    /// The resolver deleted the account's JWT (nats-server <c>removeCb</c>): an account in use is locked out (limits 0,
    /// JetStream off), marked expired and its clients closed through <see cref="Expired"/>.
    /// </summary>
    public void Remove(string publicKey)
    {
        if (!registry.TryGet(publicKey, out var account) || account.Jwt is null)
        {
            return;
        }

        account.Disable();
        registry.NotifyChanged();
        account.MarkExpired();
        RefreshImports(account);
        Expired?.Invoke(account);
    }

    private static (string? Operator, bool Strict, FrozenSet<string> Keys) FirstOperatorKeys(OperatorOptions options)
    {
        if (options.Operators.Count == 0 || !JwtToken.TryDecodeOperator(options.Operators[0], out var claims, out _))
        {
            return (null, false, FrozenSet<string>.Empty);
        }

        var keys = new HashSet<string>(claims.Nats.SigningKeys ?? [], StringComparer.Ordinal);
        if (!claims.Nats.StrictSigningKeyUsage)
        {
            keys.Add(claims.Subject!);
        }

        return (claims.Subject, claims.Nats.StrictSigningKeyUsage, keys.ToFrozenSet(StringComparer.Ordinal));
    }
}
