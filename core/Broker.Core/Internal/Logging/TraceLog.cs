using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Logging;

/// <summary>
/// Protocol trace lines (<c>-V</c>, <c>-DV</c>; event ids 900-999, docs/logging.md), as nats-server prints them:
/// <c>127.0.0.1:50604 - cid:4 - "name" - &lt;&lt;- [SUB foo 1]</c> for what a client sent, <c>-&gt;&gt; [MSG foo 1 5]</c>
/// for what it was sent, <c>&lt;-&gt; [DELSUB 1]</c> for a subscription ending. Logged at Trace level only, and only
/// formatted for connections that trace (see <c>ProtocolTrace</c>).
/// </summary>
internal static partial class TraceLog
{
    [LoggerMessage(900, LogLevel.Trace, "{Client} - {Direction} [{Operation}]")]
    public static partial void Operation(ILogger logger, string client, string direction, string operation);

    [LoggerMessage(901, LogLevel.Trace, "{Client} - <<- MSG_PAYLOAD: [{Payload}]")]
    public static partial void Payload(ILogger logger, string client, string payload);
}
