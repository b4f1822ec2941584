using System.Collections.Frozen;
using Broker.Core.Internal.Accounts.Resolvers;
using System.Diagnostics.CodeAnalysis;
using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;
using NATS.NKeys;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// Operator mode's accounts (nats-server <c>LookupAccount</c> → <c>fetchAccount</c> → <c>verifyAccountClaims</c>):
/// the trusted operator keys, the <c>MEMORY</c> resolver's account JWTs, and the registration of an account in the
/// <see cref="AccountRegistry"/> (named by its public key) the first time a user of it connects. An account JWT is
/// taken only when signed by a trusted key and currently valid; an account whose JWT expires later is marked expired
/// by a timer and its clients closed through <see cref="Expired"/>.
/// </summary>
internal sealed partial class JwtAccounts : IDisposable
{
    private readonly AccountRegistry registry;
    private readonly TimeProvider time;
    private readonly AccountExpiryTimers expiry;

    public JwtAccounts(OperatorOptions options, AccountRegistry registry, TimeProvider? time = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        this.registry = registry;
        this.time = time ?? TimeProvider.System;
        expiry = new AccountExpiryTimers(this.time, account => Expired?.Invoke(account));
        systemExports = registry.System?.ServiceExports ?? [];
        var trusted = new HashSet<string>(options.TrustedKeys, StringComparer.Ordinal);
        var operatorJwts = new List<string>();
        foreach (var token in options.Operators)
        {
            if (!JwtToken.TryDecodeOperator(token, out var claims, out var error))
            {
                throw new InvalidOperationException($"error parsing operator JWT: {error}");
            }

            operatorJwts.Add(token);

            // nats-server: the operator's own key is trusted unless it asks for strict signing key usage.
            if (!claims.Nats.StrictSigningKeyUsage)
            {
                trusted.Add(claims.Subject!);
            }

            foreach (var key in claims.Nats.SigningKeys ?? [])
            {
                trusted.Add(key);
            }
        }

        TrustedKeys = trusted.ToFrozenSet(StringComparer.Ordinal);
        OperatorJwts = operatorJwts;
        Resolver = AccountResolver.Create(options);
        (FirstOperator, StrictSigningKeyUsage, OperatorKeys) = FirstOperatorKeys(options);
    }

    /// <summary>The public operator keys trusted to sign accounts.</summary>
    public FrozenSet<string> TrustedKeys { get; }

    /// <summary>The operator JWTs as configured (/varz <c>trusted_operators_jwt</c>).</summary>
    public IReadOnlyList<string> OperatorJwts { get; }

    /// <summary>Raised on a timer thread when an account's JWT expires, after the account is marked expired.</summary>
    public event Action<Account>? Expired;

    /// <summary>
    /// The account <paramref name="publicKey"/>, registered from its JWT the first time; null with the reason
    /// (nats-server's error texts) when there is no JWT for it or the JWT is not valid.
    /// </summary>
    public bool TryLookup(string publicKey, [NotNullWhen(true)] out Account? account, [NotNullWhen(false)] out string? error)
    {
        if (registry.TryGet(publicKey, out account) && account.Jwt is not null)
        {
            error = null;
            return true;
        }

        if (!JwtToken.IsPublicKey(publicKey, PrefixByte.Account))
        {
            error = "will only fetch valid account keys";
            account = null;
            return false;
        }

        if (!Resolver.TryFetch(publicKey, out var token))
        {
            error = "account not found";
            account = null;
            return false;
        }

        if (!TryVerify(publicKey, token, out var jwt, out error))
        {
            account = null;
            return false;
        }

        account = registry.Register(publicKey, created => created.ApplyJwt(jwt));
        if (ReferenceEquals(account.Jwt, jwt))
        {
            expiry.Start(account, jwt.Claims);
            RefreshImports(account);
        }

        return true;
    }

    /// <summary>
    /// Takes the system account's JWT when the resolver has it (nats-server looks the system account up at start),
    /// so its limits and /accountz details are the JWT's, and its exports and imports those of the JWT beside the
    /// system exports (an exporter the resolver has is registered now, as nats-server's lookup does).
    /// </summary>
    public void LoadSystemAccount()
    {
        if (registry.System is { } system && Resolver.TryFetch(system.Name, out var token) && TryVerify(system.Name, token, out var jwt, out _))
        {
            system.ApplyJwt(jwt);
            expiry.Start(system, jwt.Claims);
            RefreshImports(system);
        }
    }

    /// <summary>Whether <paramref name="issuer"/> is a trusted operator key.</summary>
    public bool IsTrusted(string? issuer) => issuer is not null && TrustedKeys.Contains(issuer);

    public void Dispose()
    {
        Resolver.Dispose();
        DisposeActivationTimers();
        expiry.Dispose();
    }

    // nats-server verifyAccountClaims: decoded, for this account, signed by a trusted operator, and valid now.
    private bool TryVerify(string publicKey, string token, [NotNullWhen(true)] out AccountJwt? jwt, [NotNullWhen(false)] out string? error)
    {
        jwt = null;
        if (!JwtToken.TryDecodeAccount(token, out var claims, out error))
        {
            return false;
        }

        if (claims.Subject != publicKey || !IsTrusted(claims.Issuer))
        {
            error = "account validation failed";
            return false;
        }

        if ((claims.Nats.Authorization?.Validate() ?? ClaimsValidator.CheckTimes(claims, time.GetUtcNow())) is { } invalid)
        {
            error = "account validation failed: " + invalid;
            return false;
        }

        try
        {
            jwt = AccountJwt.Create(token, claims, time);
        }
        catch (InvalidOperationException ex)
        {
            error = "account validation failed: " + ex.Message;
            return false;
        }

        error = null;
        return true;
    }
}
