namespace Broker.Core.Internal.Auth;

/// <summary>Re-checking connected clients after a configuration reload.</summary>
internal sealed partial class Authenticator
{
    /// <summary>
    /// Authenticates a connected client again under this (new) configuration. When the secret the client proved
    /// against <paramref name="previous"/> is stored unchanged here, the result is taken without checking the secret
    /// again, so a reload does not run one bcrypt per connection; otherwise the credentials are checked in full.
    /// </summary>
    public AuthenticatedUser? Reauthenticate(Authenticator previous, string? user, string? password, string? token, string? noAuthUser = null)
    {
        ArgumentNullException.ThrowIfNull(previous);
        if (!AuthRequired)
        {
            return Anonymous;
        }

        if (users.Count > 0 && !string.IsNullOrEmpty(user)
            && users.TryGetValue(user, out var entry)
            && previous.users.TryGetValue(user, out var before)
            && string.Equals(entry.Password, before.Password, StringComparison.Ordinal))
        {
            return entry.Result;
        }

        if (users.Count == 0 && this.token is not null && previous.users.Count == 0
            && string.Equals(this.token, previous.token, StringComparison.Ordinal))
        {
            return tokenUser;
        }

        if (users.Count == 0 && this.token is null && singleUser is not null
            && previous.users.Count == 0 && previous.token is null
            && string.Equals(user, singleUser, StringComparison.Ordinal)
            && string.Equals(singleUser, previous.singleUser, StringComparison.Ordinal)
            && string.Equals(singlePassword, previous.singlePassword, StringComparison.Ordinal))
        {
            return singleUserResult;
        }

        return Authenticate(user, password, token, noAuthUser);
    }
}
