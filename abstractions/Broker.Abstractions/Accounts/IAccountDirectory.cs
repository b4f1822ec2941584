namespace Broker.Abstractions;

/// <summary>
/// The broker's accounts, as plugins see them (since contract 1.3): the global account <c>$G</c> and those of the
/// configuration's <c>accounts { }</c>, each an isolated subject space. Provided by the broker as a service beside
/// <see cref="IMessageBus"/>; a plugin that keeps state per account (JetStream, MQTT) opens its clients with
/// <see cref="BusClientOptions.Account"/> and follows the changes a configuration reload makes.
/// </summary>
/// <remarks>Thread-safe.</remarks>
public interface IAccountDirectory
{
    /// <summary>
    /// The accounts now: <c>$G</c> first, then the others by name (ordinal). A snapshot: a reload replaces the list, it
    /// never changes one already returned.
    /// </summary>
    IReadOnlyList<BrokerAccount> Accounts { get; }

    /// <summary>
    /// Calls <paramref name="onChange"/> for each account a configuration reload adds, updates (what
    /// <see cref="BrokerAccount"/> says of it changed) or removes, once the reload is in force (so
    /// <see cref="Accounts"/> already shows it), one change at a time in the order removed, added, updated, on the
    /// thread that applies the reload. The callback must return quickly and must not reload the broker; an exception it
    /// throws is logged and the other watchers are still called. Changes before the call are not reported: read
    /// <see cref="Accounts"/> after watching.
    /// </summary>
    /// <param name="onChange">Called for each change.</param>
    /// <returns>Dispose it to stop watching.</returns>
    IDisposable Watch(Action<AccountChange> onChange);
}
