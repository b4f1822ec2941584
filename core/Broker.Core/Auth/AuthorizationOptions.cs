namespace Broker.Core.Auth;

/// <summary>
/// Client authentication and authorization, as nats-server's <c>authorization { }</c> block.
/// With nothing set, every client is accepted with full permissions.
/// </summary>
public sealed class AuthorizationOptions
{
    /// <summary>A token clients must send as <c>auth_token</c>; plain or bcrypt (<c>$2a$</c>...). Default none.</summary>
    public string? Token { get; set; }

    /// <summary>The single user name (with <see cref="Password"/>). Default none.</summary>
    public string? User { get; set; }

    /// <summary>The single user's password, plain or bcrypt. Default none.</summary>
    public string? Password { get; set; }

    /// <summary>Users with their own passwords (or NKeys) and permissions. Default empty.</summary>
    public IList<UserOptions> Users { get; set; } = [];

    /// <summary>
    /// Permissions for entries of <see cref="Users"/> that have none of their own (not for the single
    /// <see cref="User"/> or token clients, as in nats-server). Default none (full permissions).
    /// </summary>
    public PermissionsOptions? DefaultPermissions { get; set; }

    /// <summary>
    /// A user from <see cref="Users"/> that connections sending no credentials at all (no user, password or token)
    /// are bound to, without a password check. Default none.
    /// </summary>
    public string? NoAuthUser { get; set; }

    /// <summary>
    /// Authorization callout (nats-server 2.10 <c>auth_callout</c>): clients other than its auth users are authorized
    /// by an external service. Default none.
    /// </summary>
    public AuthCalloutOptions? AuthCallout { get; set; }

    private static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(2);
    private TimeSpan? timeout;

    /// <summary>
    /// How long a client may take to send CONNECT when authentication is required. Default 2 seconds, or, when it
    /// is not set and the connection uses TLS, the TLS handshake timeout plus one second (as nats-server).
    /// </summary>
    public TimeSpan Timeout
    {
        get => timeout ?? DefaultTimeout;
        set => timeout = value;
    }

    /// <summary>Whether <see cref="Timeout"/> was set explicitly rather than left at its default.</summary>
    public bool IsTimeoutSet => timeout.HasValue;

    /// <summary>Whether any authentication method is configured.</summary>
    public bool IsAuthRequired => !string.IsNullOrEmpty(Token) || !string.IsNullOrEmpty(User) || Users.Count > 0;

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public AuthorizationOptions Clone()
    {
        var copy = (AuthorizationOptions)MemberwiseClone();
        copy.Users = [.. Users.Select(u => u.Clone())];
        copy.DefaultPermissions = DefaultPermissions?.Clone();
        copy.AuthCallout = AuthCallout?.Clone();
        return copy;
    }

    /// <summary>Checks for combinations nats-server refuses.</summary>
    /// <exception cref="InvalidOperationException">The settings conflict; the message says how.</exception>
    public void Validate() => Validate([]);

    /// <summary>
    /// Checks for combinations nats-server refuses, with the users of <paramref name="accounts"/>: account names,
    /// user names and NKeys unique across <see cref="Users"/> and every account, no single user or token beside
    /// account users, and <see cref="NoAuthUser"/> naming a user of any of them. The texts of the new checks are
    /// nats-server's (<c>opts.go parseAccounts</c>, <c>auth.go validateNoAuthUser</c>).
    /// </summary>
    /// <param name="accounts">The configured accounts (<see cref="BrokerOptions.Accounts"/>).</param>
    /// <exception cref="InvalidOperationException">The settings conflict; the message says how.</exception>
    public void Validate(IEnumerable<AccountOptions> accounts)
    {
        ArgumentNullException.ThrowIfNull(accounts);
        if (Token is not null && (User is not null || Users.Count > 0))
        {
            throw new InvalidOperationException("authorization: can not have a token and users at the same time");
        }

        if (User is not null && Users.Count > 0)
        {
            throw new InvalidOperationException("authorization: can not have a single user/pass and a users array");
        }

        if ((User is null) != (Password is null))
        {
            throw new InvalidOperationException("authorization: user and password must be set together");
        }

        var seen = new HashSet<string>(StringComparer.Ordinal);
        var nkeys = new HashSet<string>(StringComparer.Ordinal);
        foreach (var user in Users)
        {
            if (!CheckUser(user, nkeys, "authorization: Duplicate nkey \"{0}\" detected") && !seen.Add(user.User))
            {
                throw new InvalidOperationException($"authorization: duplicate user \"{user.User}\"");
            }
        }

        DefaultPermissions?.Validate();
        ValidateAccounts(accounts, seen, nkeys);
        AuthCallout?.Validate(
            new HashSet<string>(accounts.Select(a => a.Name).Append(Internal.Accounts.Account.GlobalName), StringComparer.Ordinal),
            new HashSet<string>(seen.Concat(nkeys), StringComparer.Ordinal));
        if (string.IsNullOrEmpty(NoAuthUser))
        {
            return;
        }

        if (seen.Count == 0)
        {
            throw new InvalidOperationException($"no_auth_user: \"{NoAuthUser}\" present, but users are not defined");
        }

        if (!seen.Contains(NoAuthUser))
        {
            throw new InvalidOperationException($"no_auth_user: \"{NoAuthUser}\" not present as user in authorization block or account configuration");
        }
    }

    private void ValidateAccounts(IEnumerable<AccountOptions> accounts, HashSet<string> users, HashSet<string> nkeys)
    {
        var names = new HashSet<string>(StringComparer.Ordinal);
        foreach (var account in accounts)
        {
            ArgumentNullException.ThrowIfNull(account);
            if (string.IsNullOrEmpty(account.Name))
            {
                throw new InvalidOperationException("accounts: every account needs a name");
            }

            if (account.Name == Internal.Accounts.Account.GlobalName)
            {
                throw new InvalidOperationException($"\"{account.Name}\" is a Reserved Account");
            }

            if (!names.Add(account.Name))
            {
                throw new InvalidOperationException($"Duplicate Account Entry: {account.Name}");
            }

            if (account.Nkey is not null && !IsPublicKey(NATS.NKeys.PrefixByte.Account, account.Nkey))
            {
                throw new InvalidOperationException($"Not a valid public nkey for an account: \"{account.Nkey}\"");
            }

            if (account.Users.Count > 0 && !string.IsNullOrEmpty(User))
            {
                throw new InvalidOperationException("Can not have a single user/pass and accounts");
            }

            if (account.Users.Count > 0 && !string.IsNullOrEmpty(Token))
            {
                throw new InvalidOperationException("Can not have a token and accounts");
            }

            foreach (var user in account.Users)
            {
                // Unique across authorization and every account: one user binds to one account.
                if (!CheckUser(user, nkeys, "Duplicate nkey \"{0}\" detected") && !users.Add(user.User))
                {
                    throw new InvalidOperationException($"Duplicate user \"{user.User}\" detected");
                }
            }

            account.DefaultPermissions?.Validate();
        }
    }

    /// <summary>Checks one users entry; true for an NKey user (then recorded in <paramref name="nkeys"/>), false for a named one.</summary>
    private static bool CheckUser(UserOptions user, HashSet<string> nkeys, string duplicateNkey)
    {
        ArgumentNullException.ThrowIfNull(user);
        user.Permissions?.Validate();
        if (user.Nkey is null)
        {
            return string.IsNullOrEmpty(user.User)
                ? throw new InvalidOperationException("authorization: every user needs a name or an nkey")
                : false;
        }

        // nats-server parseUsers' checks and texts.
        if (!IsPublicKey(NATS.NKeys.PrefixByte.User, user.Nkey))
        {
            throw new InvalidOperationException($"authorization: \"{user.Nkey}\": Not a valid public nkey for a user");
        }

        if (!string.IsNullOrEmpty(user.User) || !string.IsNullOrEmpty(user.Password))
        {
            throw new InvalidOperationException("authorization: Nkey users do not take usernames or passwords");
        }

        return nkeys.Add(user.Nkey)
            ? true
            : throw new InvalidOperationException(string.Format(System.Globalization.CultureInfo.InvariantCulture, duplicateNkey, user.Nkey));
    }

    // NATS.NKeys throws for a key with a bad checksum rather than answering false.
    private static bool IsPublicKey(NATS.NKeys.PrefixByte prefix, string key) => Internal.Jwt.JwtToken.IsPublicKey(key, prefix);
}
