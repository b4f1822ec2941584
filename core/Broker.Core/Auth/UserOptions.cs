namespace Broker.Core.Auth;

/// <summary>One entry of <see cref="AuthorizationOptions.Users"/>.</summary>
public sealed class UserOptions
{
    /// <summary>The user name clients send as <c>user</c>.</summary>
    public string User { get; set; } = "";

    /// <summary>
    /// The password, plain or bcrypt (<c>$2a$</c>, <c>$2b$</c>, <c>$2x$</c>, <c>$2y$</c>). Default none, which as in
    /// nats-server means the user authenticates with an empty or absent password.
    /// </summary>
    public string? Password { get; set; }

    /// <summary>The user's permissions; default none, meaning <see cref="AuthorizationOptions.DefaultPermissions"/> or full permissions.</summary>
    public PermissionsOptions? Permissions { get; set; }

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public UserOptions Clone() => new() { User = User, Password = Password, Permissions = Permissions?.Clone() };
}
