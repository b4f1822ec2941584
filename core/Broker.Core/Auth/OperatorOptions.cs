using System.Diagnostics.CodeAnalysis;
using Broker.Core.Internal.Jwt;
using NATS.NKeys;

namespace Broker.Core.Auth;

/// <summary>
/// Operator (JWT) mode, as nats-server's <c>operator</c>, <c>trusted_keys</c>, <c>resolver</c> and
/// <c>resolver_preload</c>: clients authenticate with user JWTs signed (directly or through a signing key) by an account,
/// whose JWT is signed by a trusted operator; accounts are named by their public keys and made at first use from the
/// account resolver. Default: off (no operator, no trusted keys).
/// </summary>
public sealed class OperatorOptions
{
    /// <summary>The trusted operators' JWTs (the token text). Default empty.</summary>
    public IList<string> Operators { get; set; } = [];

    /// <summary>Public operator keys trusted to sign accounts, instead of operator JWTs. Default empty.</summary>
    public IList<string> TrustedKeys { get; set; } = [];

    /// <summary>Where account JWTs come from. Default <see cref="AccountResolverType.None"/> (required in operator mode).</summary>
    public AccountResolverType Resolver { get; set; }

    /// <summary>
    /// The full or cache resolver's directory and settings (used when <see cref="Resolver"/> is
    /// <see cref="AccountResolverType.Full"/> or <see cref="AccountResolverType.Cache"/>). Default: no directory.
    /// </summary>
    public DirectoryResolverOptions DirectoryResolver { get; set; } = new();

    /// <summary>Account public keys to account JWTs the resolver starts with. Default empty.</summary>
    public IDictionary<string, string> ResolverPreload { get; set; } = new Dictionary<string, string>(StringComparer.Ordinal);

    /// <summary>Whether operator mode is on: an operator or a trusted key is configured.</summary>
    public bool IsEnabled => Operators.Count > 0 || TrustedKeys.Count > 0;

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public OperatorOptions Clone() => new()
    {
        Operators = [.. Operators],
        TrustedKeys = [.. TrustedKeys],
        Resolver = Resolver,
        DirectoryResolver = DirectoryResolver.Clone(),
        ResolverPreload = new Dictionary<string, string>(ResolverPreload, StringComparer.Ordinal),
    };

    /// <summary>
    /// For configuration readers: the JWT in a file's text, the first item between <c>-----BEGIN ...-----</c> and
    /// <c>------END ...------</c> lines, or the whole text trimmed when it has none (nats-io/jwt <c>ParseDecoratedJWT</c>).
    /// </summary>
    /// <param name="text">The file's text.</param>
    /// <returns>The JWT.</returns>
    public static string ReadDecoratedJwt(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        return CredsFile.ParseDecoratedJwt(text);
    }

    /// <summary>For configuration readers: whether <paramref name="token"/> is a valid operator JWT (signature included).</summary>
    /// <param name="token">The JWT.</param>
    /// <param name="error">Why not, in nats-io/jwt's words where it has them.</param>
    /// <returns>Whether it is.</returns>
    public static bool IsOperatorJwt(string token, [NotNullWhen(false)] out string? error)
    {
        ArgumentNullException.ThrowIfNull(token);
        return JwtToken.TryDecodeOperator(token, out _, out error);
    }

    /// <summary>For configuration readers: whether <paramref name="key"/> is a valid public operator NKey.</summary>
    /// <param name="key">The key.</param>
    /// <returns>Whether it is.</returns>
    public static bool IsOperatorKey(string key) => JwtToken.IsPublicKey(key, PrefixByte.Operator);

    /// <summary>For configuration readers: whether <paramref name="token"/> is a valid account JWT (signature included).</summary>
    /// <param name="token">The JWT.</param>
    /// <returns>Whether it is.</returns>
    public static bool IsAccountJwt(string token)
    {
        ArgumentNullException.ThrowIfNull(token);
        return JwtToken.TryDecodeAccount(token, out _, out _);
    }

    /// <summary>
    /// The system account the first operator JWT names (nats-server takes it when <c>system_account</c> is not set),
    /// or <see langword="null"/>.
    /// </summary>
    internal string? OperatorSystemAccount() =>
        Operators.Count == 1 && JwtToken.TryDecodeOperator(Operators[0], out var claims, out _) && !string.IsNullOrEmpty(claims.Nats.SystemAccount)
            ? claims.Nats.SystemAccount
            : null;

    /// <summary>Checks the trust configuration as nats-server's <c>validateTrustedOperators</c> does, with its texts.</summary>
    /// <param name="options">The broker options this belongs to.</param>
    /// <exception cref="InvalidOperationException">The configuration is inconsistent.</exception>
    public void Validate(BrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        DirectoryResolver.Validate(Resolver);
        var operators = new List<OperatorClaims>();
        foreach (var token in Operators)
        {
            if (!JwtToken.TryDecodeOperator(token, out var claims, out var error))
            {
                throw new InvalidOperationException($"error parsing operator JWT: {error}");
            }

            operators.Add(claims);
        }

        foreach (var (key, token) in ResolverPreload)
        {
            if (!JwtToken.TryDecodeAccount(token, out _, out var error))
            {
                throw new InvalidOperationException($"preload account error for \"{key}\": {error}");
            }
        }

        if (operators.Count > 0)
        {
            if (Resolver == AccountResolverType.None)
            {
                throw new InvalidOperationException("operators require an account resolver to be configured");
            }

            if (options.Accounts.Count > 0)
            {
                throw new InvalidOperationException("operators do not allow Accounts to be configured directly");
            }

            if (options.Authorization.Users.Count > 0)
            {
                throw new InvalidOperationException("operators do not allow users to be configured directly");
            }

            if (TrustedKeys.Count > 0)
            {
                throw new InvalidOperationException("conflicting options for 'TrustedKeys' and 'TrustedOperators'");
            }

            if (options.SystemAccount is { } system && operators.Any(o => !string.IsNullOrEmpty(o.Nats.SystemAccount))
                && !operators.Any(o => o.Nats.SystemAccount == system))
            {
                throw new InvalidOperationException("system_account in config and operator JWT must be identical");
            }

            if (options.SystemAccount is null && string.IsNullOrEmpty(operators[0].Nats.SystemAccount)
                && Resolver is AccountResolverType.Full or AccountResolverType.Cache)
            {
                throw new InvalidOperationException("using nats based account resolver - the system account needs to be specified in configuration or the operator jwt");
            }
        }

        foreach (var key in TrustedKeys)
        {
            if (!JwtToken.IsPublicKey(key, PrefixByte.Operator))
            {
                throw new InvalidOperationException($"trusted Keys \"{key}\" are required to be a valid public operator nkey");
            }
        }

        // nats-server 2.10: the authorization callout of operator mode is configured in account JWTs, not the file.
        if (operators.Count > 0 && options.Authorization.AuthCallout is not null)
        {
            throw new InvalidOperationException("operators do not allow authorization callouts to be configured directly");
        }

        if (IsEnabled && !string.IsNullOrEmpty(options.Authorization.NoAuthUser))
        {
            throw new InvalidOperationException("no_auth_user not compatible with Trusted Operator");
        }
    }
}

/// <summary>Where account JWTs come from in operator mode.</summary>
public enum AccountResolverType
{
    /// <summary>No resolver (operator mode refuses to start without one).</summary>
    None,

    /// <summary>nats-server's <c>MEMORY</c> resolver: the preloaded account JWTs, held in memory.</summary>
    Memory,

    /// <summary>
    /// nats-server's full nats-based resolver (<c>type: full</c>): every account JWT pushed through
    /// <c>$SYS.REQ.CLAIMS.UPDATE</c> kept in <see cref="OperatorOptions.DirectoryResolver"/>'s directory.
    /// </summary>
    Full,

    /// <summary>
    /// nats-server's caching nats-based resolver (<c>type: cache</c>): like <see cref="Full"/>, but it keeps only the
    /// JWTs of accounts in use (least recently used evicted beyond the limit, optional ttl) and takes updates only for
    /// accounts this server knows.
    /// </summary>
    Cache,
}
