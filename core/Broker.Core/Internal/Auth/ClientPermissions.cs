namespace Broker.Core.Internal.Auth;

/// <summary>
/// The publish and subscribe permissions of one connection, with a per-connection cache of publish decisions
/// and the reply subjects it may answer (<c>allow_responses</c>).
/// </summary>
internal sealed partial class ClientPermissions
{
    /// <summary>Whether the connection may publish to a literal subject. Allocation-free on a cache hit.</summary>
    public bool CanPublish(ReadOnlySpan<byte> subject) => throw new NotImplementedException();

    /// <summary>Whether the connection may subscribe to a subject (possibly with wildcards) in a queue group.</summary>
    public bool CanSubscribe(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue) => throw new NotImplementedException();

    /// <summary>Whether a new wildcard subscription overlaps a subscribe-deny entry, so deliveries need a check.</summary>
    public bool NeedsDeliveryCheck(ReadOnlySpan<byte> subject) => throw new NotImplementedException();

    /// <summary>Whether a message on a literal subject may be delivered (subscribe-deny checked at delivery).</summary>
    public bool IsDeliveryAllowed(ReadOnlySpan<byte> subject) => throw new NotImplementedException();

    /// <summary>Whether this connection tracks reply subjects for <c>allow_responses</c>.</summary>
    public bool TracksResponses => throw new NotImplementedException();

    /// <summary>Records that a message with this reply subject was delivered; thread-safe.</summary>
    public void TrackReply(ReadOnlySpan<byte> reply) => throw new NotImplementedException();
}
