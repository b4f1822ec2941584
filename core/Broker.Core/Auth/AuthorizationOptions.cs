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
        return copy;
    }

    /// <summary>Checks for combinations nats-server refuses.</summary>
    /// <exception cref="InvalidOperationException">The settings conflict; the message says how.</exception>
    public void Validate()
    {
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
            if (user.Nkey is not null)
            {
                // nats-server parseUsers' checks and texts.
                if (!IsPublicUserKey(user.Nkey))
                {
                    throw new InvalidOperationException($"authorization: \"{user.Nkey}\": Not a valid public nkey for a user");
                }

                if (!string.IsNullOrEmpty(user.User) || !string.IsNullOrEmpty(user.Password))
                {
                    throw new InvalidOperationException("authorization: Nkey users do not take usernames or passwords");
                }

                if (!nkeys.Add(user.Nkey))
                {
                    throw new InvalidOperationException($"authorization: Duplicate nkey \"{user.Nkey}\" detected");
                }
            }
            else if (string.IsNullOrEmpty(user.User))
            {
                throw new InvalidOperationException("authorization: every user needs a name or an nkey");
            }
            else if (!seen.Add(user.User))
            {
                throw new InvalidOperationException($"authorization: duplicate user \"{user.User}\"");
            }

            user.Permissions?.Validate();
        }

        DefaultPermissions?.Validate();
        if (!string.IsNullOrEmpty(NoAuthUser) && !seen.Contains(NoAuthUser))
        {
            throw new InvalidOperationException($"no_auth_user: \"{NoAuthUser}\" not present as user in authorization block");
        }
    }

    // NATS.NKeys throws for a key with a bad checksum rather than answering false.
    private static bool IsPublicUserKey(string key)
    {
        try
        {
            return NATS.NKeys.KeyPair.IsValidPublicKey(NATS.NKeys.PrefixByte.User, key);
        }
        catch (Exception ex) when (ex is NATS.NKeys.NKeysException or ArgumentException or FormatException)
        {
            return false;
        }
    }
}
