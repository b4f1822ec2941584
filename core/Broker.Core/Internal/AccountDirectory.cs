using System.Collections.Immutable;
using Broker.Abstractions;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal;

/// <summary>
/// The broker's <see cref="IAccountDirectory"/>: the accounts of the <see cref="AccountRegistry"/> as plugins see them,
/// and the changes a reload makes, found by comparing the list before and after <see cref="AccountRegistry.Apply"/>.
/// Lock-free: the list and the watchers are immutable snapshots swapped whole (the registry has one writer at a
/// time, the reload).
/// </summary>
internal sealed class AccountDirectory : IAccountDirectory
{
    private readonly AccountRegistry registry;
    private readonly ILogger logger;
    private ImmutableArray<Watcher> watchers = [];
    private volatile IReadOnlyList<BrokerAccount> accounts;

    public AccountDirectory(AccountRegistry registry, ILogger logger)
    {
        this.registry = registry;
        this.logger = logger;
        accounts = Describe(registry);
        registry.Applied += Refresh;
    }

    public IReadOnlyList<BrokerAccount> Accounts => accounts;

    public IDisposable Watch(Action<AccountChange> onChange)
    {
        ArgumentNullException.ThrowIfNull(onChange);
        var watcher = new Watcher(this, onChange);
        ImmutableInterlocked.Update(ref watchers, static (list, added) => list.Add(added), watcher);
        return watcher;
    }

    /// <summary>Takes the registry's accounts after a reload and tells the watchers what changed.</summary>
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

        foreach (var change in changes)
        {
            foreach (var watcher in watchers)
            {
                watcher.Notify(change, logger);
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

    private sealed class Watcher(AccountDirectory directory, Action<AccountChange> onChange) : IDisposable
    {
        private volatile bool disposed;

        public void Notify(AccountChange change, ILogger logger)
        {
            if (disposed)
            {
                return;
            }

            try
            {
                onChange(change);
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
    }
}
