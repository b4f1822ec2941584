using System.Security.Cryptography;
using System.Text;
using Broker.Core.Auth;
using Broker.Core.Internal.Accounts;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// Checks CONNECT credentials against the configured users, passwords and token, as nats-server's
/// <c>auth.go processClientOrLeafAuthentication</c> does for clients (NKey users when the client sends an NKey, then
/// the users list, then the token, then the single user). Users of <c>authorization.users</c> and of every account's
/// <c>users</c> live in one users map and one NKey map (names and keys are unique across them, as nats-server checks at
/// load), each result carrying its account's name. Everything is compiled at construction, and
/// <see cref="Authenticate"/> is safe from any thread.
/// A bcrypt check costs what its hash's cost says (about 100 ms at cost 11), on the caller's thread.
/// </summary>
internal sealed partial class Authenticator
{
    private static readonly AuthenticatedUser Anonymous = new(null, null);

    private readonly Dictionary<string, UserEntry> users = new(StringComparer.Ordinal);
    private readonly UserEntry? noAuthUser;
    private readonly string? token;
    private readonly string? singleUser;
    private readonly string? singlePassword;
    private readonly AuthenticatedUser tokenUser = Anonymous;
    private readonly AuthenticatedUser? singleUserResult;
    private readonly TimeProvider time;

    /// <summary>Compiles the options (validating them first) and warns once about plaintext passwords.</summary>
    /// <exception cref="InvalidOperationException">The options are inconsistent or a permission subject is malformed.</exception>
    public Authenticator(AuthorizationOptions options, ILogger? logger = null, TimeProvider? time = null)
        : this(options, [], logger, time)
    {
    }

    /// <summary>
    /// Compiles <c>authorization</c> and the users of <paramref name="accounts"/> (validating them first) and warns once
    /// about plaintext passwords. An account's <c>default_permissions</c> apply to its users that have none.
    /// <paramref name="systemOnlyNoAuthUser"/>, when given, is a user of <c>$G</c> added as the <c>no_auth_user</c>
    /// (nats-server's <c>nats-XXXXXXXX</c> user when only <c>$G</c> and a configured system account exist and no
    /// <c>no_auth_user</c> is set, so clients without credentials keep working); its password is the part after
    /// <c>nats-</c>, as nats-server sets it, and the warning about plaintext passwords does not count it.
    /// </summary>
    /// <exception cref="InvalidOperationException">The options are inconsistent or a permission subject is malformed.</exception>
    /// <remarks><paramref name="jwtAccounts"/> turns on operator mode (user JWTs only).</remarks>
    public Authenticator(AuthorizationOptions options, IEnumerable<AccountOptions> accounts, ILogger? logger = null, TimeProvider? time = null, string? systemOnlyNoAuthUser = null, JwtAccounts? jwtAccounts = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(accounts);
        options.Validate(accounts);
        logger ??= NullLogger.Instance;
        time ??= TimeProvider.System;
        this.time = time;
        this.jwtAccounts = jwtAccounts;

        // As nats-server: users in any account require authentication, like users in authorization; so does operator mode.
        AuthRequired = options.IsAuthRequired || accounts.Any(a => a.Users.Count > 0) || systemOnlyNoAuthUser is not null || jwtAccounts is not null;
        Timeout = options.Timeout;
        if (!string.IsNullOrEmpty(options.Token))
        {
            token = options.Token;
        }

        if (!string.IsNullOrEmpty(options.User))
        {
            singleUser = options.User;
            singlePassword = options.Password ?? "";

            // opts.go applies default_permissions to the users list only; the single user has full permissions.
            singleUserResult = new AuthenticatedUser(singleUser, null);
        }

        AddUsers(options.Users, options.DefaultPermissions, Accounts.Account.GlobalName, time);
        foreach (var account in accounts)
        {
            AddUsers(account.Users, account.DefaultPermissions, account.Name, time);
        }

        // As nats-server checkAuthforWarnings: a plain single password or any users entry not bcrypt-hashed
        // (an empty one included); tokens are not part of that warning.
        if ((singleUser is not null && !BcryptPassword.IsHash(singlePassword)) || users.Values.Any(u => !BcryptPassword.IsHash(u.Password)))
        {
            AuthLog.PlaintextPasswords(logger);
        }

        if (!string.IsNullOrEmpty(options.NoAuthUser))
        {
            noAuthUser = users[options.NoAuthUser];
        }
        else if (systemOnlyNoAuthUser is not null)
        {
            noAuthUser = new UserEntry(systemOnlyNoAuthUser["nats-".Length..], new AuthenticatedUser(systemOnlyNoAuthUser, null));
            users.Add(systemOnlyNoAuthUser, noAuthUser);
        }
    }

    /// <summary>
    /// The account of the user (or NKey user) a connection authenticated as, under this configuration; null when no
    /// such user is configured (nats-server <c>clientHasMovedToDifferentAccount</c>). The single user is in <c>$G</c>.
    /// </summary>
    public string? AccountOf(string name) =>
        users.TryGetValue(name, out var entry) ? entry.Result.Account
        : nkeys.TryGetValue(name, out var nkeyUser) ? nkeyUser.Account
        : string.Equals(name, singleUser, StringComparison.Ordinal) ? Accounts.Account.GlobalName
        : null;

    /// <summary>Whether a client without credentials is bound to a user (<c>no_auth_user</c>, configured or invented).</summary>
    public bool HasNoAuthUser => noAuthUser is not null;

    /// <summary>Whether clients must authenticate.</summary>
    public bool AuthRequired { get; }

    /// <summary>How long a client may take to send CONNECT when authentication is required.</summary>
    public TimeSpan Timeout { get; }

    /// <summary>
    /// Authenticates CONNECT credentials (<c>user</c>, <c>pass</c>, <c>auth_token</c>; empty counts as absent);
    /// <see langword="null"/> means Authorization Violation. Without configured authentication everyone is accepted
    /// with full permissions. <paramref name="noAuthUser"/> names the user a client without credentials is bound to
    /// in place of the configured <c>no_auth_user</c> (nats-server's <c>mqtt { no_auth_user }</c>); a name that is
    /// not among the users binds nobody.
    /// </summary>
    public AuthenticatedUser? Authenticate(string? user, string? password, string? token, string? noAuthUser = null)
    {
        if (!AuthRequired)
        {
            return Anonymous;
        }

        if (users.Count > 0)
        {
            if (string.IsNullOrEmpty(user))
            {
                // no_auth_user binds a connection that sent no credentials at all. nats-server does so by comparing
                // the user's stored password with itself, which fails for a bcrypt one; we bind without a check.
                var bound = noAuthUser is null ? this.noAuthUser : users.GetValueOrDefault(noAuthUser);
                return bound is not null && string.IsNullOrEmpty(password) && string.IsNullOrEmpty(token)
                    ? bound.Result
                    : null;
            }

            // A user configured without a password authenticates with an empty one, as in nats-server.
            return users.TryGetValue(user, out var entry) && CheckSecret(entry.Password, password)
                ? entry.Result
                : null;
        }

        if (this.token is not null)
        {
            return CheckSecret(this.token, token) ? tokenUser : null;
        }

        if (singleUser is not null)
        {
            return string.Equals(user, singleUser, StringComparison.Ordinal) && CheckSecret(singlePassword!, password)
                ? singleUserResult
                : null;
        }

        return null;
    }

    private void AddUsers(IEnumerable<UserOptions> configured, PermissionsOptions? defaultPermissions, string account, TimeProvider time)
    {
        // One compiled template per distinct options object: users sharing default_permissions share it.
        var defaults = defaultPermissions is null ? null : PermissionsTemplate.Compile(defaultPermissions, time);
        foreach (var user in configured)
        {
            var permissions = user.Permissions is null ? defaults : PermissionsTemplate.Compile(user.Permissions, time);
            if (user.Nkey is not null)
            {
                // nats-server names an NKey user by its public key (connz authorized_user).
                nkeys.Add(user.Nkey, new AuthenticatedUser(user.Nkey, permissions, account));
                continue;
            }

            users.Add(user.User, new UserEntry(user.Password ?? "", new AuthenticatedUser(user.User, permissions, account)));
        }
    }

    /// <summary>nats-server <c>comparePasswords</c>: bcrypt when the stored secret is a hash, else constant time.</summary>
    internal static bool CheckSecret(string stored, string? offered)
    {
        offered ??= "";
        if (BcryptPassword.IsHash(stored))
        {
            return BcryptPassword.Verify(offered, stored);
        }

        // FixedTimeEquals is constant time for equal lengths; like Go's ConstantTimeCompare, the length may show.
        var storedCount = Encoding.UTF8.GetByteCount(stored);
        var offeredCount = Encoding.UTF8.GetByteCount(offered);
        if (storedCount != offeredCount)
        {
            return false;
        }

        Span<byte> buffer = storedCount <= 256 ? stackalloc byte[storedCount * 2] : new byte[storedCount * 2];
        var storedBytes = buffer[..storedCount];
        var offeredBytes = buffer[storedCount..];
        Encoding.UTF8.GetBytes(stored, storedBytes);
        Encoding.UTF8.GetBytes(offered, offeredBytes);
        var equal = CryptographicOperations.FixedTimeEquals(storedBytes, offeredBytes);
        CryptographicOperations.ZeroMemory(buffer);
        return equal;
    }

    private sealed record UserEntry(string Password, AuthenticatedUser Result);
}

/// <summary>The outcome of a successful authentication.</summary>
/// <param name="Name">The user name, or <see langword="null"/> for token or anonymous access.</param>
/// <param name="Permissions">The user's permissions, or <see langword="null"/> for full permissions.</param>
/// <param name="Account">The name of the account the user belongs to (<c>$G</c> for users outside <c>accounts</c>).</param>
/// <param name="Jwt">In operator mode, what the user's JWT gave it; otherwise null.</param>
internal sealed record AuthenticatedUser(string? Name, PermissionsTemplate? Permissions, string Account = Accounts.Account.GlobalName, JwtUser? Jwt = null);
