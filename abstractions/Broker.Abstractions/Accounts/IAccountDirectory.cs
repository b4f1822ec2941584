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
    /// <see cref="BrokerAccount"/> says of it changed) or removes (in operator mode also an account registered at its
    /// first client's CONNECT or changed by a claims update), once the change is in force (so <see cref="Accounts"/>
    /// already shows it), one change at a time in the order removed, added, updated, on the thread that made the
    /// change. The callback must return quickly and must not reload the broker; an exception it throws is logged and
    /// the other watchers are still called. Changes before the call are not reported: read <see cref="Accounts"/> after
    /// watching. The broker does not wait for what the callback starts: a watcher whose work must be done before the
    /// change counts as applied uses the overload that returns a task.
    /// </summary>
    /// <param name="onChange">Called for each change.</param>
    /// <returns>Dispose it to stop watching.</returns>
    IDisposable Watch(Action<AccountChange> onChange);

    /// <summary>
    /// Calls <paramref name="onChange"/> for each account change the other overload reports, and lets the broker wait
    /// for it (since contract 1.3): the change is applied once the task of every such watcher completed. Until then the CONNECT that registered or changed the account is not completed (its <c>+OK</c>, the <c>PONG</c>
    /// after it and whatever the client sent after it wait), a claims update is not answered and a reload does not
    /// return; each waits at most 2 seconds, then goes on. Calls are made one at a time, in the order of the changes,
    /// never on the thread that made the change and never holding a broker lock: the next change is passed once the
    /// task of the previous one completed. The callback must not reload the broker nor wait for a client's CONNECT;
    /// an exception it throws (or its task ends with) is logged and the next change is still passed.
    /// </summary>
    /// <param name="onChange">Called for each change with a token cancelled when the broker stops.</param>
    /// <returns>Dispose it to stop watching: no call starts after that (one already running is not waited for).</returns>
    IDisposable Watch(Func<AccountChange, CancellationToken, ValueTask> onChange);
}
