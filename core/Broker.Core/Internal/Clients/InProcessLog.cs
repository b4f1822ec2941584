using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>Log messages of in-process clients and adapters' connections (event ids 200-299, docs/logging.md).</summary>
internal static partial class InProcessLog
{
    [LoggerMessage(200, LogLevel.Error, "In-process client {Client}: handler for {Subject} failed")]
    public static partial void HandlerFailed(ILogger logger, string client, string subject, Exception exception);

    [LoggerMessage(201, LogLevel.Warning, "{Client} publish violation for subject {Subject}")]
    public static partial void PublishViolation(ILogger logger, BusConnection client, string subject);

    [LoggerMessage(202, LogLevel.Warning, "{Client} subscription violation for subject {Subject}")]
    public static partial void SubscribeViolation(ILogger logger, BusConnection client, string subject);

    [LoggerMessage(203, LogLevel.Warning, "{Client} authorization violation")]
    public static partial void AuthorizationViolation(ILogger logger, BusConnection client);

    [LoggerMessage(204, LogLevel.Warning, "{Client} maximum connections exceeded")]
    public static partial void MaxConnectionsExceeded(ILogger logger, BusConnection client);

    [LoggerMessage(205, LogLevel.Warning, "{Client} slow consumer detected: {Reason}")]
    public static partial void SlowConsumer(ILogger logger, BusConnection client, string reason);

    [LoggerMessage(206, LogLevel.Information, "{Client} subscription to {Subject} removed by a configuration reload: no longer authorized")]
    public static partial void SubscriptionRemovedOnReload(ILogger logger, BusConnection client, string subject);

    [LoggerMessage(207, LogLevel.Error, "{Client}: output handler for {Subject} failed")]
    public static partial void OutputHandlerFailed(ILogger logger, BusConnection client, string subject, Exception exception);

    [LoggerMessage(208, LogLevel.Debug, "{Client} closed: {Reason}")]
    public static partial void ConnectionClosed(ILogger logger, BusConnection client, string reason);

    [LoggerMessage(209, LogLevel.Warning, "{Client} maximum account active connections exceeded for account {Account}")]
    public static partial void MaxAccountConnectionsExceeded(ILogger logger, BusConnection client, string account);

    [LoggerMessage(210, LogLevel.Information, "{Client} closed by a configuration reload: its user is gone or no longer in account {Account}, or the account is gone")]
    public static partial void AccountChanged(ILogger logger, BusConnection client, string account);

    [LoggerMessage(211, LogLevel.Error, "An account directory watcher failed on {Kind} of account {Account}")]
    public static partial void AccountWatcherFailed(ILogger logger, string kind, string account, Exception exception);
}
