using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Auth;

/// <summary>Log messages of authentication and authorization; event ids 1100-1199 (docs/logging.md).</summary>
internal static partial class AuthLog
{
    /// <summary>nats-server's warning (<c>auth.go checkAuthforWarnings</c>), logged once when the options are compiled.</summary>
    [LoggerMessage(EventId = 1100, EventName = "PlaintextPasswords", Level = LogLevel.Warning, Message = "Plaintext passwords detected, use nkeys or bcrypt")]
    public static partial void PlaintextPasswords(ILogger logger);
}
