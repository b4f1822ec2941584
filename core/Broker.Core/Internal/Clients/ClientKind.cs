namespace Broker.Core.Internal.Clients;

/// <summary>What a client is, as /connz and permissions see it.</summary>
internal enum ClientKind
{
    /// <summary>A NATS client connection over a transport.</summary>
    Client,

    /// <summary>An in-process client opened through <see cref="Broker.Abstractions.IMessageBus"/>.</summary>
    Internal,

    /// <summary>An account's internal client, owning its service import subscriptions (nats-server's <c>ACCOUNT</c>).</summary>
    Account,

    /// <summary>A leaf node link to a hub (nats-server's <c>LEAF</c>): its subscriptions stand for the hub's interest.</summary>
    Leaf,

    /// <summary>One account of a route to another cluster member (nats-server's <c>ROUTER</c>): its subscriptions stand for the member's interest.</summary>
    Route,
}
