using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Protocol;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Logging;

/// <summary>
/// Log messages about client connections (event ids 100-199, docs/logging.md). A client's own misbehaviour is a warning, never an
/// error: errors are reserved for faults of the broker, which the test kit treats as test failures.
/// </summary>
internal static partial class ClientLog
{
    [LoggerMessage(100, LogLevel.Debug, "{Client} closed: {Reason}")]
    public static partial void ClientClosed(ILogger logger, NatsClient client, string reason);

    [LoggerMessage(101, LogLevel.Warning, "{Client} protocol error: {Error}")]
    public static partial void ProtocolError(ILogger logger, NatsClient client, ProtocolError error);

    [LoggerMessage(102, LogLevel.Warning, "{Client} authorization violation")]
    public static partial void AuthorizationViolation(ILogger logger, NatsClient client);

    [LoggerMessage(103, LogLevel.Warning, "{Client} authentication timeout")]
    public static partial void AuthenticationTimeout(ILogger logger, NatsClient client);

    [LoggerMessage(104, LogLevel.Warning, "{Client} slow consumer detected: {Reason}")]
    public static partial void SlowConsumer(ILogger logger, NatsClient client, string reason);

    [LoggerMessage(105, LogLevel.Information, "{Client} stale connection, closing")]
    public static partial void StaleConnection(ILogger logger, NatsClient client);

    [LoggerMessage(106, LogLevel.Warning, "{Client} maximum connections exceeded")]
    public static partial void MaxConnectionsExceeded(ILogger logger, NatsClient client);

    [LoggerMessage(107, LogLevel.Warning, "{Client} maximum subscriptions exceeded")]
    public static partial void MaxSubscriptionsExceeded(ILogger logger, NatsClient client);

    [LoggerMessage(108, LogLevel.Warning, "{Client} publish violation for subject {Subject}")]
    private static partial void PublishViolation(ILogger logger, NatsClient client, string subject);

    [LoggerMessage(109, LogLevel.Warning, "{Client} subscription violation for subject {Subject}")]
    private static partial void SubscribeViolation(ILogger logger, NatsClient client, string subject);

    [LoggerMessage(110, LogLevel.Warning, "{Client} sent -ERR {Message}, closing")]
    private static partial void ClientSentError(ILogger logger, NatsClient client, string message);

    [LoggerMessage(111, LogLevel.Warning, "{Client} sent a CONNECT that is not valid JSON, closing")]
    public static partial void BadConnect(ILogger logger, NatsClient client);

    [LoggerMessage(112, LogLevel.Warning, "{Client} read failed")]
    public static partial void ReadFailed(ILogger logger, NatsClient client, Exception exception);

    [LoggerMessage(113, LogLevel.Debug, "{Client} sent clear text (or nothing in time) where TLS is required, closing")]
    public static partial void TlsRequired(ILogger logger, NatsClient client);

    [LoggerMessage(114, LogLevel.Warning, "{Client} user {User} found in CONNECT, but the user is taken from the certificate")]
    public static partial void UserFromCertificate(ILogger logger, NatsClient client, string user);

    /// <summary>Why an NKey user's CONNECT was refused, in nats-server's words ("Signature not verified").</summary>
    [LoggerMessage(115, LogLevel.Debug, "{Client} {Reason}")]
    public static partial void NkeyRefused(ILogger logger, NatsClient client, string reason);

    [LoggerMessage(116, LogLevel.Information, "{Client} subscription to {Subject} removed by a configuration reload: no longer authorized")]
    public static partial void SubscriptionRemovedOnReload(ILogger logger, NatsClient client, string subject);

    [LoggerMessage(117, LogLevel.Warning, "{Client} maximum account active connections exceeded (account {Account})")]
    public static partial void MaxAccountConnectionsExceeded(ILogger logger, NatsClient client, string account);

    [LoggerMessage(118, LogLevel.Information, "{Client} closed by a configuration reload: its user is no longer in account {Account}")]
    public static partial void AccountChangedOnReload(ILogger logger, NatsClient client, string account);

    /// <summary>Operator mode: the user's or the account's JWT expired on a live connection.</summary>
    [LoggerMessage(119, LogLevel.Debug, "{Client} {Reason}")]
    public static partial void AuthenticationExpired(ILogger logger, NatsClient client, string reason);

    public static void PublishViolation(ILogger logger, NatsClient client, ReadOnlySpan<byte> subject)
    {
        if (logger.IsEnabled(LogLevel.Warning))
        {
            PublishViolation(logger, client, System.Text.Encoding.UTF8.GetString(subject));
        }
    }

    public static void SubscribeViolation(ILogger logger, NatsClient client, ReadOnlySpan<byte> subject)
    {
        if (logger.IsEnabled(LogLevel.Warning))
        {
            SubscribeViolation(logger, client, System.Text.Encoding.UTF8.GetString(subject));
        }
    }

    public static void ClientSentError(ILogger logger, NatsClient client, ReadOnlySpan<byte> message)
    {
        if (logger.IsEnabled(LogLevel.Warning))
        {
            ClientSentError(logger, client, System.Text.Encoding.UTF8.GetString(message));
        }
    }
}
