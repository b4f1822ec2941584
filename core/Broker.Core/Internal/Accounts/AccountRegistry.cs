using System.Collections.Frozen;
using System.Diagnostics.CodeAnalysis;
using Broker.Core.Auth;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// The broker's accounts by name: the global account <c>$G</c> always, plus the configured ones. A lookup reads a
/// frozen snapshot and takes no lock; <see cref="Apply"/> swaps the snapshot and runs only at start and under the
/// reload gate, so there is one writer at a time.
/// </summary>
internal sealed class AccountRegistry
{
    private volatile FrozenDictionary<string, Account> byName;

    /// <param name="accounts">The configured accounts.</param>
    /// <param name="globalMappings">The top-level mappings, which are the global account's (<see cref="BrokerOptions.Mappings"/>).</param>
    public AccountRegistry(IEnumerable<AccountOptions> accounts, IEnumerable<MappingOptions>? globalMappings = null)
    {
        Global = new Account(Account.GlobalName, AccountLimits.None);
        byName = Build(accounts, globalMappings, new Dictionary<string, Account>(StringComparer.Ordinal) { [Global.Name] = Global });
    }

    /// <summary>The global account <c>$G</c>.</summary>
    public Account Global { get; }

    /// <summary>Every account, <c>$G</c> included.</summary>
    public IEnumerable<Account> All => byName.Values;

    /// <summary>How many accounts there are, <c>$G</c> included.</summary>
    public int Count => byName.Count;

    /// <summary>Subscriptions of every account together (for /varz and the metrics).</summary>
    public int SubscriptionCount()
    {
        var total = 0;
        foreach (var account in byName.Values)
        {
            total += account.SubList.Count;
        }

        return total;
    }

    /// <summary>A statistic of every account's subject index, summed.</summary>
    public long Sum(Func<SubList, long> statistic)
    {
        long total = 0;
        foreach (var account in byName.Values)
        {
            total += statistic(account.SubList);
        }

        return total;
    }

    public bool TryGet(string name, [NotNullWhen(true)] out Account? account) => byName.TryGetValue(name, out account);

    /// <summary>
    /// Takes a reloaded configuration: accounts still configured keep their instance (and subscriptions) with the
    /// new limits, new ones are added, removed ones leave the registry (their clients are closed by the reload).
    /// </summary>
    public void Apply(IEnumerable<AccountOptions> accounts, IEnumerable<MappingOptions>? globalMappings = null)
    {
        var existing = new Dictionary<string, Account>(byName, StringComparer.Ordinal);
        byName = Build(accounts, globalMappings, existing);
        Applied?.Invoke();
    }

    /// <summary>
    /// Called after <see cref="Apply"/> swapped the snapshot, on the applying thread (the plugins' account directory
    /// reports the changes from here).
    /// </summary>
    public event Action? Applied;

    private static FrozenDictionary<string, Account> Build(IEnumerable<AccountOptions> accounts, IEnumerable<MappingOptions>? globalMappings, Dictionary<string, Account> existing)
    {
        // $G has only the top-level mappings of its own, but nats-server stamps its update time with every other account's.
        var global = existing[Account.GlobalName];
        global.Update(AccountLimits.None, nkey: null, SubjectMapper.Create(globalMappings));
        var result = new Dictionary<string, Account>(StringComparer.Ordinal) { [Account.GlobalName] = global };
        foreach (var options in accounts)
        {
            var limits = AccountLimits.From(options.Limits);
            if (existing.TryGetValue(options.Name, out var account))
            {
                account.Update(limits, options.Nkey, SubjectMapper.Create(options.Mappings));
            }
            else
            {
                account = new Account(options.Name, limits, options.Nkey, SubjectMapper.Create(options.Mappings));
            }

            account.JetStream = options.JetStream?.ToLimits();
            result[options.Name] = account;
        }

        // The options were validated, so every exporter is here and no import is refused.
        var imports = ImportsCompiler.Compile(accounts, exporter => result[exporter]);
        foreach (var options in accounts)
        {
            var exports = options.Exports.Streams.Select(e => (e.Subject, e.Accounts is null ? null : e.Accounts.ToArray())).ToArray();
            result[options.Name].SetStreams(imports[options.Name], exports);
        }

        return result.ToFrozenDictionary(StringComparer.Ordinal);
    }
}
