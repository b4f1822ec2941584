using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// Log messages about leaf node links (event ids 1700-1749, docs/logging.md). A hub's refusal or a lost link is a
/// warning (the link retries), as for clients; errors are kept for the broker's own faults.
/// </summary>
internal static partial class LeafLog
{
    [LoggerMessage(1700, LogLevel.Information, "Leafnode connection created for account {Account} to {Url} ({Server})")]
    public static partial void Connected(ILogger logger, string account, string url, string server);

    [LoggerMessage(1701, LogLevel.Information, "Leafnode connection to {Url} closed: {Reason}")]
    public static partial void Closed(ILogger logger, string url, string reason);

    [LoggerMessage(1702, LogLevel.Warning, "Error trying to connect as leafnode to remote server \"{Host}\" (attempt {Attempt}): {Reason}")]
    public static partial void ConnectFailed(ILogger logger, string host, int attempt, string reason);

    [LoggerMessage(1703, LogLevel.Warning, "{Message}")]
    public static partial void LoopDetected(ILogger logger, string message);

    [LoggerMessage(1704, LogLevel.Warning, "Leafnode error from {Url}: {Error}")]
    public static partial void RemoteError(ILogger logger, string url, string error);

    [LoggerMessage(1705, LogLevel.Warning, "Leafnode connection to {Url} refused: {Reason}")]
    public static partial void Refused(ILogger logger, string url, string reason);

    [LoggerMessage(1706, LogLevel.Warning, "Leafnode connection from {Peer} refused: {Reason}")]
    public static partial void SpokeRefused(ILogger logger, string peer, string reason);

    [LoggerMessage(1707, LogLevel.Information, "Listening for leafnode connections on {Address}")]
    public static partial void HubListening(ILogger logger, string address);

    [LoggerMessage(1708, LogLevel.Warning, "Leafnode connection from {Url} replaces the older one of the same server ({Server})")]
    public static partial void ReplacingSpoke(ILogger logger, string url, string server);

    [LoggerMessage(1721, LogLevel.Information, "Adding deny \"{Subject}\" for outgoing messages to account \"{Account}\"")]
    public static partial void DomainDeny(ILogger logger, string subject, string account);

    [LoggerMessage(1709, LogLevel.Warning, "TLS leafnode handshake error with {Url}: {Error}")]
    public static partial void TlsFailed(ILogger logger, string url, string error);

    [LoggerMessage(1710, LogLevel.Warning, "Error soliciting websocket connection to {Url}: {Error}")]
    public static partial void WebSocketFailed(ILogger logger, string url, string error);
}
