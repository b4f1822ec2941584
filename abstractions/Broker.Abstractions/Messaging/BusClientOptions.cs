namespace Broker.Abstractions;

/// <summary>Options of an in-process client.</summary>
public sealed record BusClientOptions
{
    /// <summary>The client name shown in monitoring. Default <c>"internal"</c>.</summary>
    public string Name { get; init; } = "internal";

    /// <summary>Whether the client receives its own publishes on its matching subscriptions. Default <see langword="true"/>.</summary>
    public bool Echo { get; init; } = true;
}
