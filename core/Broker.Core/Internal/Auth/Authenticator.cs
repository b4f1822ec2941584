namespace Broker.Core.Internal.Auth;

/// <summary>Checks CONNECT credentials against the configured users, passwords and token.</summary>
internal sealed partial class Authenticator
{
    public Authenticator(Broker.Core.Auth.AuthorizationOptions options, Microsoft.Extensions.Logging.ILogger logger) => throw new NotImplementedException();

    /// <summary>Whether clients must authenticate.</summary>
    public bool AuthRequired => throw new NotImplementedException();

    /// <summary>Authenticates credentials; <see langword="null"/> means Authorization Violation.</summary>
    public AuthenticatedUser? Authenticate(string? user, string? password, string? token) => throw new NotImplementedException();
}

/// <summary>The outcome of a successful authentication.</summary>
/// <param name="Name">The user name, or <see langword="null"/> for token or anonymous access.</param>
/// <param name="Permissions">The user's permissions, or <see langword="null"/> for full permissions.</param>
internal sealed record AuthenticatedUser(string? Name, PermissionsTemplate? Permissions);
