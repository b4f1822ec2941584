using Broker.Core.Internal.Jwt;
using NATS.NKeys;

namespace Broker.TestKit;

/// <summary>
/// Mints operator, account and user JWTs and creds files for operator-mode tests, with NATS.NKeys keys and the
/// broker's own encoder (<see cref="JwtToken.Encode"/>). Claims start from nats-io/jwt's defaults (nsc's), and each
/// mint takes a callback to change them. A fixed clock may be given for expiry tests.
/// </summary>
internal static class TestJwt
{
    /// <summary>A fresh key pair of the given type.</summary>
    public static KeyPair NewKey(PrefixByte prefix) => KeyPair.CreatePair(prefix);

    /// <summary>An operator JWT self-signed by <paramref name="operatorKey"/> (or by a signing key listed in it).</summary>
    public static string Operator(KeyPair operatorKey, Action<OperatorClaims>? configure = null, KeyPair? signer = null, DateTimeOffset? now = null)
    {
        var claims = new OperatorClaims { Subject = operatorKey.GetPublicKey(), Name = "O" };
        configure?.Invoke(claims);
        return JwtToken.Encode(claims, ClaimsJsonContext.Default.OperatorClaims, signer ?? operatorKey, now ?? DateTimeOffset.UtcNow);
    }

    /// <summary>An account JWT for <paramref name="accountKey"/> signed by <paramref name="signer"/> (the operator or one of its signing keys).</summary>
    public static string Account(KeyPair signer, string accountKey, Action<AccountClaims>? configure = null, DateTimeOffset? now = null)
    {
        var claims = AccountClaims.Create(accountKey);
        claims.Name = accountKey.Length > 8 ? accountKey[..8] : accountKey;
        configure?.Invoke(claims);
        return JwtToken.Encode(claims, ClaimsJsonContext.Default.AccountClaims, signer, now ?? DateTimeOffset.UtcNow);
    }

    /// <summary>
    /// A user JWT for <paramref name="userKey"/> signed by <paramref name="signer"/>: the account itself, or one of its
    /// signing keys (then pass <paramref name="issuerAccount"/>).
    /// </summary>
    public static string User(KeyPair signer, string userKey, Action<UserClaims>? configure = null, string? issuerAccount = null, DateTimeOffset? now = null)
    {
        var claims = UserClaims.Create(userKey);
        claims.Name = userKey.Length > 8 ? userKey[..8] : userKey;
        claims.Nats.IssuerAccount = issuerAccount;
        configure?.Invoke(claims);
        return JwtToken.Encode(claims, ClaimsJsonContext.Default.UserClaims, signer, now ?? DateTimeOffset.UtcNow);
    }

    /// <summary>The text of a creds file for <paramref name="jwt"/> and <paramref name="userKey"/>'s seed.</summary>
    public static string Creds(string jwt, KeyPair userKey) => CredsFile.Format(jwt, userKey.GetSeed());

    /// <summary>Writes a creds file into <paramref name="directory"/> and returns its path.</summary>
    public static string WriteCreds(string directory, string name, string jwt, KeyPair userKey)
    {
        var path = Path.Combine(directory, name + ".creds");
        File.WriteAllText(path, Creds(jwt, userKey));
        return path;
    }
}

/// <summary>
/// An operator with a system account, ready for a <c>resolver: MEMORY</c> configuration: accounts and users made
/// through it are signed along the chain operator → account → user.
/// </summary>
internal sealed class TestOperator
{
    private readonly Dictionary<string, string> accountJwts = new(StringComparer.Ordinal);

    public TestOperator(Action<OperatorClaims>? configure = null)
    {
        Key = TestJwt.NewKey(PrefixByte.Operator);
        SystemAccount = TestJwt.NewKey(PrefixByte.Account);
        Jwt = TestJwt.Operator(Key, claims =>
        {
            claims.Nats.SystemAccount = SystemAccount.GetPublicKey();
            configure?.Invoke(claims);
        });
        AddAccount(SystemAccount, claims => claims.Name = "SYS");
    }

    public KeyPair Key { get; }

    public string PublicKey => Key.GetPublicKey();

    public string Jwt { get; }

    public KeyPair SystemAccount { get; }

    /// <summary>Account public keys to their current JWTs, for <c>resolver_preload</c>.</summary>
    public IReadOnlyDictionary<string, string> AccountJwts => accountJwts;

    /// <summary>A new account signed by the operator (or <paramref name="signer"/>), added to <see cref="AccountJwts"/>.</summary>
    public KeyPair CreateAccount(Action<AccountClaims>? configure = null, KeyPair? signer = null)
    {
        var account = TestJwt.NewKey(PrefixByte.Account);
        AddAccount(account, configure, signer);
        return account;
    }

    /// <summary>(Re)issues <paramref name="account"/>'s JWT, replacing it in <see cref="AccountJwts"/>.</summary>
    public string AddAccount(KeyPair account, Action<AccountClaims>? configure = null, KeyPair? signer = null)
    {
        var jwt = TestJwt.Account(signer ?? Key, account.GetPublicKey(), configure);
        accountJwts[account.GetPublicKey()] = jwt;
        return jwt;
    }

    /// <summary>The configuration lines of operator mode: the operator JWT inline, MEMORY resolver, the preloaded accounts.</summary>
    public string ConfigLines()
    {
        var lines = new System.Text.StringBuilder();
        lines.Append("operator: \"").Append(Jwt).Append("\"\n");
        lines.Append("resolver: MEMORY\n");
        lines.Append("resolver_preload: {\n");
        foreach (var (key, jwt) in accountJwts)
        {
            lines.Append("  ").Append(key).Append(": \"").Append(jwt).Append("\"\n");
        }

        lines.Append("}\n");
        return lines.ToString();
    }

    /// <summary>A user of <paramref name="account"/> signed by it (or by <paramref name="signingKey"/>, one of its signing keys).</summary>
    public static (KeyPair User, string Jwt) CreateUser(KeyPair account, Action<UserClaims>? configure = null, KeyPair? signingKey = null)
    {
        var user = TestJwt.NewKey(PrefixByte.User);
        var jwt = TestJwt.User(signingKey ?? account, user.GetPublicKey(), configure, signingKey is null ? null : account.GetPublicKey());
        return (user, jwt);
    }
}
