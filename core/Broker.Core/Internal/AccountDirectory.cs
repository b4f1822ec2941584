using System.Collections.Immutable;
using Broker.Abstractions;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal;

/// <summary>
/// The broker's <see cref="IAccountDirectory"/>: the accounts of the <see cref="AccountRegistry"/> as plugins see them,
/// and the changes a reload, a first CONNECT or a claims update makes, found by comparing the list before and after the
/// registry's change. Watchers with a task are called one change at a time each, on a chain of their own off the
/// changing thread; the changed accounts carry the task of those calls (<see cref="Account.Settling"/>), which a
/// CONNECT and a claims update's answer wait for (nats-server sets an account's JetStream up before either completes),
/// and <see cref="Settled"/> is the latest change's, which a reload waits for. Lock-free: the list and the watchers are
/// immutable snapshots swapped whole (the registry has one writer at a time, under <c>AccountRegistry.sync</c>).
/// </summary>
internal sealed class AccountDirectory : IAccountDirectory
{
    /// <summary>How long a CONNECT, a claims update's answer or a reload waits for the watchers to apply a change.</summary>
    public static readonly TimeSpan SettleLimit = TimeSpan.FromSeconds(2);

    private readonly AccountRegistry registry;
    private readonly ILogger logger;
    private readonly CancellationToken stopping;
    private ImmutableArray<Watcher> watchers = [];
    private volatile IReadOnlyList<BrokerAccount> accounts;
    private volatile Task settled = Task.CompletedTask;

    /// <param name="registry">The accounts.</param>
    /// <param name="logger">Where a watcher's failure is logged.</param>
    /// <param name="stopping">Cancelled when the broker stops: passed to the watchers with a task.</param>
    public AccountDirectory(AccountRegistry registry, ILogger logger, CancellationToken stopping)
    {
        this.registry = registry;
        this.logger = logger;
        this.stopping = stopping;
        accounts = Describe(registry);
        registry.Applied += Refresh;
    }

    public IReadOnlyList<BrokerAccount> Accounts => accounts;

    /// <summary>Completes once every watcher with a task applied the changes made so far (never faults).</summary>
    public Task Settled => settled;

    public IDisposable Watch(Action<AccountChange> onChange)
    {
        ArgumentNullException.ThrowIfNull(onChange);
        return Add(new Watcher(this, onChange, null));
    }

    public IDisposable Watch(Func<AccountChange, CancellationToken, ValueTask> onChange)
    {
        ArgumentNullException.ThrowIfNull(onChange);
        return Add(new Watcher(this, null, onChange));
    }

    /// <summary>Waits (at most <see cref="SettleLimit"/>) for the watchers to apply the changes made so far.</summary>
    public Task WaitSettledAsync(CancellationToken cancellationToken) => WaitAsync(settled, cancellationToken);

    /// <summary>Waits for <paramref name="settling"/> at most <see cref="SettleLimit"/>: a slow watcher delays, it does not stop.</summary>
    public static async Task WaitAsync(Task settling, CancellationToken cancellationToken)
    {
        if (settling.IsCompleted)
        {
            return;
        }

        await settling.WaitAsync(SettleLimit, cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
    }

    private Watcher Add(Watcher watcher)
    {
        ImmutableInterlocked.Update(ref watchers, static (list, added) => list.Add(added), watcher);
        return watcher;
    }

    /// <summary>
    /// Takes the registry's accounts after a change and tells the watchers what changed (under
    /// <c>AccountRegistry.sync</c>, so each watcher's calls follow the registry's order).
    /// </summary>
    private void Refresh()
    {
        var before = accounts;
        var after = Describe(registry);
        accounts = after;
        var changes = Compare(before, after);
        if (changes.Count == 0)
        {
            return;
        }

        var current = watchers;
        foreach (var change in changes)
        {
            foreach (var watcher in current)
            {
                watcher.Notify(change, logger, stopping);
            }
        }

        // A watcher's chain ends with its last change: one task per watcher covers all of them.
        var tails = current.Where(w => w.IsAsync).Select(w => w.Tail).Where(t => !t.IsCompleted).ToArray();
        if (tails.Length == 0)
        {
            return;
        }

        var settling = tails.Length == 1 ? tails[0] : Task.WhenAll(tails);
        settled = settling;
        foreach (var change in changes)
        {
            if (registry.TryGet(change.Account.Name, out var account))
            {
                account.Settle(settling);
            }
        }
    }

    /// <summary>The changes from <paramref name="before"/> to <paramref name="after"/>: removed, added, then updated, each by name.</summary>
    internal static List<AccountChange> Compare(IReadOnlyList<BrokerAccount> before, IReadOnlyList<BrokerAccount> after)
    {
        var old = before.ToDictionary(a => a.Name, StringComparer.Ordinal);
        var now = after.ToDictionary(a => a.Name, StringComparer.Ordinal);
        var changes = new List<AccountChange>();
        changes.AddRange(before.Where(a => !now.ContainsKey(a.Name)).Select(a => new AccountChange(AccountChangeKind.Removed, a)));
        changes.AddRange(after.Where(a => !old.ContainsKey(a.Name)).Select(a => new AccountChange(AccountChangeKind.Added, a)));
        changes.AddRange(after.Where(a => old.TryGetValue(a.Name, out var was) && was != a).Select(a => new AccountChange(AccountChangeKind.Updated, a)));
        return changes;
    }

    /// <summary><c>$G</c> first, then the others by name.</summary>
    private static BrokerAccount[] Describe(AccountRegistry registry)
        => [.. registry.All
            .OrderBy(a => a.IsGlobal ? 0 : 1)
            .ThenBy(a => a.Name, StringComparer.Ordinal)
            .Select(a => new BrokerAccount(a.Name) { JetStream = a.JetStream, IsSystem = a.IsSystem })];

    private void Remove(Watcher watcher)
        => ImmutableInterlocked.Update(ref watchers, static (list, removed) => list.Remove(removed), watcher);

    /// <summary>One watcher: called inline (<see cref="IAccountDirectory.Watch(Action{AccountChange})"/>) or on a chain of its own.</summary>
    private sealed class Watcher(AccountDirectory directory, Action<AccountChange>? onChange, Func<AccountChange, CancellationToken, ValueTask>? onChangeAsync) : IDisposable
    {
        private volatile bool disposed;

        public bool IsAsync => onChangeAsync is not null;

        /// <summary>The call of the latest change; written under <c>AccountRegistry.sync</c>.</summary>
        public Task Tail { get; private set; } = Task.CompletedTask;

        public void Notify(AccountChange change, ILogger logger, CancellationToken stopping)
        {
            if (disposed)
            {
                return;
            }

            if (onChangeAsync is not null)
            {
                Tail = CallAfterAsync(Tail, change, logger, stopping);
                return;
            }

            try
            {
                onChange!(change);
            }
#pragma warning disable CA1031 // A plugin's callback must not stop the reload nor the other watchers.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                InProcessLog.AccountWatcherFailed(logger, change.Kind.ToString(), change.Account.Name, ex);
            }
        }

        public void Dispose()
        {
            disposed = true;
            directory.Remove(this);
        }

        private async Task CallAfterAsync(Task previous, AccountChange change, ILogger logger, CancellationToken stopping)
        {
            // After the previous change, and never on the changing thread, which holds the registry's lock.
            await previous.ConfigureAwait(ConfigureAwaitOptions.ForceYielding | ConfigureAwaitOptions.SuppressThrowing);
            if (disposed)
            {
                return;
            }

            try
            {
                await onChangeAsync!(change, stopping).ConfigureAwait(false);
            }
#pragma warning disable CA1031 // A plugin's failure must not stop its next changes nor the waiters.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                InProcessLog.AccountWatcherFailed(logger, change.Kind.ToString(), change.Account.Name, ex);
            }
        }
    }
}
