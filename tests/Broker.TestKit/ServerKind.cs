namespace Broker.TestKit;

/// <summary>Which server a conformance case runs against.</summary>
public enum ServerKind
{
    /// <summary>Our broker, in-process.</summary>
    Ours,

    /// <summary>The Go reference server (Debian's nats-server), as a process.</summary>
    Reference,
}
