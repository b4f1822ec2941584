using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Events;

/// <summary>The resolver requests' log lines, in nats-server's words.</summary>
internal static partial class ClaimsLog
{
    [LoggerMessage(400, LogLevel.Debug, "{Message} - {Account}")]
    public static partial void Updated(ILogger logger, string message, string account);

    [LoggerMessage(401, LogLevel.Error, "{Message} - {Account} - {Error}")]
    public static partial void Refused(ILogger logger, string message, string account, string error);

    [LoggerMessage(402, LogLevel.Error, "update resulted in error {Error} (account {Account})")]
    public static partial void UpdateFailed(ILogger logger, string account, string error);

    [LoggerMessage(403, LogLevel.Warning, "Merging resulted in error: no JWT for account {Account}")]
    public static partial void LookupFailed(ILogger logger, string account);

    [LoggerMessage(405, LogLevel.Warning, "{Type} import of {Subject} from account {Exporter} into account {Importer} skipped: {Reason}")]
    public static partial void ImportSkipped(ILogger logger, string type, string subject, string exporter, string importer, string reason);

    [LoggerMessage(404, LogLevel.Error, "claims request on {Subject} failed")]
    public static partial void RequestFailed(ILogger logger, string subject, Exception exception);
}
