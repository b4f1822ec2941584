namespace Broker.Core.Internal.Protocol;

/// <summary>How a parse pass ended.</summary>
internal enum ParseStatus
{
    /// <summary>Everything complete was processed; the rest (if any) is an incomplete operation.</summary>
    NeedMoreData,

    /// <summary>An operation handler asked to stop (the connection is closing).</summary>
    Stopped,

    /// <summary>Bad input; see the <see cref="ProtocolError"/>.</summary>
    Error,
}
