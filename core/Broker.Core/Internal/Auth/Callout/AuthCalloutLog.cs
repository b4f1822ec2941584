using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>Log messages of the authorization callout; event ids 1600-1649 (docs/logging.md). The texts are nats-server's (auth_callout.go).</summary>
internal static partial class AuthCalloutLog
{
    /// <summary>Why a callout refused a client (nats-server logs the reason alone, as a warning).</summary>
    [LoggerMessage(EventId = 1600, EventName = "CalloutRefused", Level = LogLevel.Warning, Message = "{Reason}")]
    public static partial void Refused(ILogger logger, string reason);

    /// <summary>The service did not answer within the authentication timeout (a debug line in nats-server).</summary>
    [LoggerMessage(EventId = 1601, EventName = "CalloutTimedOut", Level = LogLevel.Debug, Message = "Authorization callout response not received in time on account \"{Account}\"")]
    public static partial void TimedOut(ILogger logger, string account);

    /// <summary>A client authorized by the callout, and where it was placed.</summary>
    [LoggerMessage(EventId = 1602, EventName = "CalloutAuthorized", Level = LogLevel.Debug, Message = "Authorization callout on account \"{Account}\" placed user {User} in account \"{Placement}\"")]
    public static partial void Authorized(ILogger logger, string account, string user, string placement);

    /// <summary>A client the callout authorized closed when its user JWT expired or its connect window ended (nats-server <c>authExpired</c>).</summary>
    [LoggerMessage(EventId = 1603, EventName = "CalloutUserExpired", Level = LogLevel.Debug, Message = "{Client} User Authentication Expired")]
    public static partial void UserExpired(ILogger logger, Clients.NatsClient client);
}
