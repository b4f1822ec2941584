namespace Broker.Core.Auth;

/// <summary>
/// Authorization callout, as nats-server 2.10's <c>authorization { auth_callout { } }</c> in server-config mode: a
/// client that is not one of <see cref="AuthUsers"/> is authorized by an external service. The broker publishes a
/// signed <c>authorization_request</c> JWT to <c>$SYS.REQ.USER.AUTH</c> in <see cref="Account"/>; the service answers
/// with an <c>authorization_response</c> JWT signed by <see cref="Issuer"/> carrying a user JWT whose <c>aud</c> names
/// the account the client is placed in, and whose permissions it gets.
/// </summary>
public sealed class AuthCalloutOptions
{
    /// <summary>
    /// The public account NKey (<c>A...</c>) that signs the service's responses and the user JWTs in them. Required;
    /// no default.
    /// </summary>
    public string Issuer { get; set; } = "";

    /// <summary>The account the requests are published in, where the service runs. Default <c>$G</c>.</summary>
    public string Account { get; set; } = Internal.Accounts.Account.GlobalName;

    /// <summary>
    /// Users (names or NKeys of configured users) that authenticate as configured, bypassing the callout: the service
    /// itself connects as one of them. At least one is required; default empty.
    /// </summary>
    public IList<string> AuthUsers { get; set; } = [];

    /// <summary>
    /// The service's public curve key (<c>X...</c>): when set, requests are sealed for it (and responses may be sealed
    /// for the broker's own curve key, sent in the <c>Nats-Server-Xkey</c> header). Default none (not encrypted).
    /// </summary>
    public string? XKey { get; set; }

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public AuthCalloutOptions Clone() => new() { Issuer = Issuer, Account = Account, AuthUsers = [.. AuthUsers], XKey = XKey };

    /// <summary>
    /// The checks nats-server makes of the block (<c>opts.go parseAuthCallout</c>) and at start (<c>auth.go
    /// configureAuthorization</c>, where an unknown account or auth user is logged as an error; here it is refused),
    /// with its texts.
    /// </summary>
    /// <param name="accounts">The names of the configured accounts (<c>$G</c> included).</param>
    /// <param name="users">The names and NKeys of the configured users, of every account.</param>
    /// <exception cref="InvalidOperationException">A check failed; the message says which.</exception>
    internal void Validate(ISet<string> accounts, ISet<string> users)
    {
        if (string.IsNullOrEmpty(Issuer))
        {
            throw new InvalidOperationException("Authorization callouts require an issuer to be specified");
        }

        if (!IsKey(NATS.NKeys.PrefixByte.Account, Issuer))
        {
            throw new InvalidOperationException($"Expected callout user to be a valid public account nkey, got \"{Issuer}\"");
        }

        if (!string.IsNullOrEmpty(XKey) && !IsKey(NATS.NKeys.PrefixByte.Curve, XKey))
        {
            throw new InvalidOperationException($"Expected callout xkey to be a valid public xkey, got \"{XKey}\"");
        }

        if (AuthUsers.Count == 0)
        {
            throw new InvalidOperationException("Authorization callouts require authorized users to be specified");
        }

        if (!accounts.Contains(string.IsNullOrEmpty(Account) ? Internal.Accounts.Account.GlobalName : Account))
        {
            throw new InvalidOperationException($"Authorization callout account \"{Account}\" not valid");
        }

        foreach (var user in AuthUsers)
        {
            if (!users.Contains(user))
            {
                throw new InvalidOperationException($"Authorization callout user \"{user}\" not valid");
            }
        }
    }

    private static bool IsKey(NATS.NKeys.PrefixByte prefix, string key)
    {
        try
        {
            return NATS.NKeys.KeyPair.IsValidPublicKey(prefix, key);
        }
        catch (Exception ex) when (ex is NATS.NKeys.NKeysException or ArgumentException or FormatException or IndexOutOfRangeException)
        {
            return false;
        }
    }
}
