using System.Collections.Frozen;
using System.Diagnostics.CodeAnalysis;
using Broker.Core.Auth;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// The broker's accounts by name: the global account <c>$G</c> always, the configured ones, and the system account
/// (<c>$SYS</c> created when none is configured, unless <c>no_system_account</c>). A lookup reads a
/// frozen snapshot and takes no lock; <see cref="Apply"/> (start and reload) and <see cref="Register"/> (operator
/// mode's accounts, at a client's first use) swap the snapshot under <c>AccountRegistry.sync</c>.
/// </summary>
internal sealed class AccountRegistry
{
    private readonly Lock sync = new();
    private volatile FrozenDictionary<string, Account> byName;
    private BrokerCore? core;

    /// <param name="accounts">The configured accounts.</param>
    /// <param name="globalMappings">The top-level mappings, which are the global account's (<see cref="BrokerOptions.Mappings"/>).</param>
    /// <param name="systemAccount">The system account's name (<see cref="SystemAccountName"/>), or null for none.</param>
    public AccountRegistry(IEnumerable<AccountOptions> accounts, IEnumerable<MappingOptions>? globalMappings = null, string? systemAccount = null)
    {
        Global = new Account(Account.GlobalName, AccountLimits.None);
        var existing = new Dictionary<string, Account>(StringComparer.Ordinal) { [Global.Name] = Global };
        if (systemAccount is not null)
        {
            // The default $SYS when no account of that name is configured (nats-server SetDefaultSystemAccount).
            existing[systemAccount] = new Account(systemAccount, AccountLimits.None) { IsSystem = true };
        }

        SystemName = systemAccount;
        byName = Build(accounts, globalMappings, existing, systemAccount);
        System = systemAccount is null ? null : byName[systemAccount];
        if (System is not null)
        {
            System.IsSystem = true;
        }
    }

    /// <summary>The global account <c>$G</c>.</summary>
    public Account Global { get; }

    /// <summary>
    /// The system account, <see langword="null"/> with <c>no_system_account</c>. The same instance for the broker's life:
    /// a reload cannot change which account it is (nats-server refuses that reload).
    /// </summary>
    public Account? System { get; }

    /// <summary>The system account's name, or <see langword="null"/>.</summary>
    public string? SystemName { get; }

    /// <summary>
    /// The system account's name under <paramref name="options"/> (nats-server: <c>system_account</c>, else a configured
    /// <c>$SYS</c>, else the default <c>$SYS</c> unless <c>no_system_account</c>), or <see langword="null"/>.
    /// </summary>
    public static string? SystemAccountName(BrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return options.SystemAccount
            ?? options.Operator.OperatorSystemAccount()
            ?? (options.Accounts.Any(a => a.Name == Account.SystemDefaultName) || !options.NoSystemAccount ? Account.SystemDefaultName : null);
    }

    /// <summary>
    /// Whether the system account is a configured one (named by <c>system_account</c> or an account called <c>$SYS</c>),
    /// as opposed to the default one the broker creates: only then does nats-server invent a no-auth user (see
    /// <see cref="Auth.Authenticator"/>).
    /// </summary>
    public static bool SystemAccountConfigured(BrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return options.SystemAccount is not null || options.Accounts.Any(a => a.Name == Account.SystemDefaultName);
    }

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
        lock (sync)
        {
            var existing = new Dictionary<string, Account>(byName, StringComparer.Ordinal);
            var built = Build(accounts, globalMappings, existing, SystemName).ToDictionary(StringComparer.Ordinal);

            // Operator mode's accounts come from JWTs, not from the configuration: they stay.
            foreach (var account in existing.Values)
            {
                if (account.Jwt is not null)
                {
                    built.TryAdd(account.Name, account);
                }
            }

            byName = built.ToFrozenDictionary(StringComparer.Ordinal);
            Applied?.Invoke();
        }

        // Outside the registry's lock: subscribing takes the accounts' SubList locks.
        SubscribeServices();
    }

    /// <summary>
    /// Gives the registry its broker, whose clients the accounts' import clients are, and subscribes every account's
    /// service imports (at start, once the broker exists; <see cref="Apply"/> does it again for a reload).
    /// </summary>
    public void Attach(BrokerCore core)
    {
        this.core = core;
        SubscribeServices();
    }

    private void SubscribeServices()
    {
        if (core is null)
        {
            return;
        }

        foreach (var account in byName.Values)
        {
            account.SubscribeServices(core);
        }
    }

    /// <summary>
    /// The account <paramref name="name"/>, created and set up by <paramref name="initialize"/> (before any client
    /// sees it) unless another thread registered it first; the snapshot is swapped once per new account.
    /// </summary>
    public Account Register(string name, Action<Account> initialize)
    {
        ArgumentNullException.ThrowIfNull(initialize);
        lock (sync)
        {
            if (byName.TryGetValue(name, out var existing) && existing.Jwt is not null)
            {
                return existing;
            }

            var account = existing ?? new Account(name, AccountLimits.None);
            initialize(account);
            if (existing is null)
            {
                var next = new Dictionary<string, Account>(byName, StringComparer.Ordinal) { [name] = account };
                byName = next.ToFrozenDictionary(StringComparer.Ordinal);
            }

            Applied?.Invoke();
            return account;
        }
    }

    /// <summary>
    /// Tells the watchers that an account changed in place (operator mode's claims update or delete), under
    /// <c>AccountRegistry.sync</c> as the other changes.
    /// </summary>
    public void NotifyChanged()
    {
        lock (sync)
        {
            Applied?.Invoke();
        }
    }

    /// <summary>
    /// Called after <see cref="Apply"/> or <see cref="Register"/> swapped the snapshot, on that thread under
    /// <c>AccountRegistry.sync</c> (the plugins' account directory reports the changes from here; a watcher must not
    /// register accounts).
    /// </summary>
    public event Action? Applied;

    private static FrozenDictionary<string, Account> Build(IEnumerable<AccountOptions> accounts, IEnumerable<MappingOptions>? globalMappings, Dictionary<string, Account> existing, string? systemAccount)
    {
        // $G has only the top-level mappings of its own, but nats-server stamps its update time with every other account's.
        var global = existing[Account.GlobalName];
        global.Update(AccountLimits.None, nkey: null, SubjectMapper.Create(globalMappings));
        var result = new Dictionary<string, Account>(StringComparer.Ordinal) { [Account.GlobalName] = global };

        // The system account stays whatever the configuration says (a default $SYS is not among the configured).
        if (systemAccount is not null && existing.TryGetValue(systemAccount, out var system))
        {
            system.Update(AccountLimits.None, nkey: null, newMappings: null);
            result[systemAccount] = system;
        }

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
            var compiled = imports[options.Name];
            var account = result[options.Name];
            account.SetStreams(compiled.Streams, exports);
            account.StageServices(compiled.Services, compiled.ServiceExports);
        }

        if (systemAccount is not null && result.TryGetValue(systemAccount, out var systemAccountNow))
        {
            SystemImports.Register(systemAccountNow, result.Values);
        }

        return result.ToFrozenDictionary(StringComparer.Ordinal);
    }
}
