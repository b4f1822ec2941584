namespace Broker.Abstractions;

/// <summary>
/// Credentials a transport obtained outside the protocol, for example from WebSocket cookies (nats-server's
/// <c>user_cookie</c>, <c>pass_cookie</c>, <c>token_cookie</c>, <c>jwt_cookie</c>). Set as a connection feature;
/// the NATS protocol handler uses each value for the CONNECT field the client left empty, as nats-server does.
/// </summary>
public sealed class TransportCredentials
{
    /// <summary>The user name, or <see langword="null"/>.</summary>
    public string? User { get; init; }

    /// <summary>The password, or <see langword="null"/>.</summary>
    public string? Password { get; init; }

    /// <summary>The authentication token, or <see langword="null"/>.</summary>
    public string? Token { get; init; }

    /// <summary>The JWT, or <see langword="null"/>.</summary>
    public string? Jwt { get; init; }
}
