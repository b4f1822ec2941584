namespace Broker.Core.Auth;

/// <summary>
/// One entry of <see cref="AuthorizationOptions.Users"/>: a user with a name and password, or an NKey user
/// (<see cref="Nkey"/>), as in nats-server's <c>users</c> array.
/// </summary>
public sealed class UserOptions
{
    /// <summary>The user name clients send as <c>user</c>. Default empty (required unless <see cref="Nkey"/> is set).</summary>
    public string User { get; set; } = "";

    /// <summary>
    /// The public NKey of an NKey user (<c>U...</c>, 56 characters): the client proves it holds the seed by signing the
    /// nonce the broker sends in INFO (CONNECT <c>nkey</c> and <c>sig</c>). An NKey user has no <see cref="User"/> or
    /// <see cref="Password"/>. Default none.
    /// </summary>
    public string? Nkey { get; set; }

    /// <summary>
    /// The password, plain or bcrypt (<c>$2a$</c>, <c>$2b$</c>, <c>$2x$</c>, <c>$2y$</c>). Default none, which as in
    /// nats-server means the user authenticates with an empty or absent password.
    /// </summary>
    public string? Password { get; set; }

    /// <summary>The user's permissions; default none, meaning <see cref="AuthorizationOptions.DefaultPermissions"/> or full permissions.</summary>
    public PermissionsOptions? Permissions { get; set; }

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public UserOptions Clone() => new() { User = User, Nkey = Nkey, Password = Password, Permissions = Permissions?.Clone() };
}
