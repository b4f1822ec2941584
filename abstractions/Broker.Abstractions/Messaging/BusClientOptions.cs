namespace Broker.Abstractions;

/// <summary>Options of an in-process client.</summary>
public sealed record BusClientOptions
{
    /// <summary>The client name shown in monitoring. Default <c>"internal"</c>.</summary>
    public string Name { get; init; } = "internal";

    /// <summary>Whether the client receives its own publishes on its matching subscriptions. Default <see langword="true"/>.</summary>
    public bool Echo { get; init; } = true;

    /// <summary>
    /// Whether publishes wait for <see cref="IBusClient.FlushAsync"/> instead of flushing per call, so a loop that sends
    /// many messages (a JetStream consumer delivering a batch) costs each receiving connection one flush. Publishes made
    /// from the client's own handlers are batched either way. Default <see langword="false"/>.
    /// </summary>
    public bool DeferFlush { get; init; }

    /// <summary>
    /// The account the client publishes and subscribes in (since contract 1.3): it sees only that account's
    /// subscriptions and its messages reach only them, with full permissions within it, as nats-server's internal
    /// clients of an account. Like them it is not counted against the account's <c>max_connections</c>. Default
    /// <see langword="null"/>: the global account <c>$G</c>, where every client is when no accounts are configured.
    /// <see cref="IMessageBus.CreateClient"/> throws <see cref="ArgumentException"/> for a name no account has
    /// (<see cref="IAccountDirectory"/> lists them).
    /// </summary>
    public string? Account { get; init; }
}
