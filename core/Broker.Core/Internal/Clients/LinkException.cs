namespace Broker.Core.Internal.Clients;

/// <summary>A link could not be opened: TLS or the WebSocket upgrade failed, or the hub's INFO did not come.</summary>
internal sealed class LinkException(LinkStage stage, string message) : Exception(message)
{
    /// <summary>What failed.</summary>
    public LinkStage Stage { get; } = stage;
}

/// <summary>The steps of opening a link that can fail before the link exists.</summary>
internal enum LinkStage
{
    /// <summary>The hub's first INFO.</summary>
    Info,

    /// <summary>The TLS handshake.</summary>
    Tls,

    /// <summary>The WebSocket upgrade.</summary>
    WebSocket,
}
