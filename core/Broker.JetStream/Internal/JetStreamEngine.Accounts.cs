using Broker.Abstractions;

namespace Broker.JetStream.Internal;

/// <summary>
/// Which accounts have JetStream, at start and after each configuration reload (nats-server's
/// <c>enableJetStreamAccounts</c>, <c>configJetStream</c>): the accounts are read from <see cref="IAccountDirectory"/>;
/// each change (a reload, or in operator mode an account's first CONNECT or a claims update) is applied by a pass over
/// the accounts as they are then, one pass at a time under <c>applyGate</c>, and the broker waits for it: the CONNECT
/// completes, the claims update is answered and the reload returns once the account's API listens (or is gone), as
/// nats-server sets an account's JetStream up before any of them.
/// </summary>
internal sealed partial class JetStreamEngine
{
    private readonly Lock accountsGate = new();
    private readonly SemaphoreSlim applyGate = new(1, 1);
    private readonly Dictionary<string, JetStreamAccount> accounts = new(StringComparer.Ordinal);
    private readonly Dictionary<string, JetStreamDisabledAccount> disabled = new(StringComparer.Ordinal);
    private SystemAccountApi? systemApi;
    private IDisposable? watch;
    private bool accountsStopped;
    private long retiredApiTotal;
    private long retiredApiErrors;

    /// <summary>The accounts with JetStream now, by name.</summary>
    public List<JetStreamAccount> JetStreamAccounts()
    {
        lock (accountsGate)
        {
            return [.. accounts.Values.OrderBy(a => a.Name, StringComparer.Ordinal)];
        }
    }

    /// <summary>The account's JetStream, or null when it has none.</summary>
    public JetStreamAccount? FindAccount(string name)
    {
        lock (accountsGate)
        {
            return accounts.GetValueOrDefault(name);
        }
    }

    /// <summary>Whether the account exists for the broker (with JetStream or not).</summary>
    public bool KnowsAccount(string name)
    {
        if (directory is null)
        {
            return name == BrokerAccount.GlobalName;
        }

        return directory.Accounts.Any(a => a.Name == name);
    }

    private async Task StartAccountsAsync(CancellationToken cancellationToken)
    {
        await applyGate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            // Watched first, so no change is missed; a change meanwhile waits for the gate and applies after this pass.
            watch = directory?.Watch(OnAccountChangeAsync);
            await ApplyAccountsAsync(starting: true, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            applyGate.Release();
        }
    }

    /// <summary>
    /// A change of the directory, called one at a time off the changing thread: one pass over the accounts as they are
    /// now covers it (and any change after it, whose own pass then has nothing left to do).
    /// </summary>
    private async ValueTask OnAccountChangeAsync(AccountChange change, CancellationToken cancellationToken)
    {
        await applyGate.WaitAsync(CancellationToken.None).ConfigureAwait(false);
        try
        {
            if (!accountsStopped)
            {
                await ApplyAccountsAsync(starting: false, stopping.Token).ConfigureAwait(false);
            }
        }
#pragma warning disable CA1031 // A failed change is logged; JetStream keeps serving the other accounts.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            JetStreamLog.AccountsUpdateFailed(Logger, ex);
        }
        finally
        {
            applyGate.Release();
        }
    }

    /// <summary>Stops applying account changes: waits for a pass under way; none starts after it.</summary>
    private async Task StopWatchingAccountsAsync()
    {
        watch?.Dispose();
        await applyGate.WaitAsync(CancellationToken.None).ConfigureAwait(false);
        accountsStopped = true;
        applyGate.Release();
    }

    /// <summary>
    /// Makes the accounts with JetStream match the directory: new ones started (their streams recovered), removed
    /// or disabled ones stopped (their data kept), changed limits applied. <c>$G</c> has JetStream only when no other
    /// account is configured, decided at start: a reload that adds accounts takes it away, one that removes them all
    /// does not give it back (nats-server's <c>configJetStream</c> on reload).
    /// </summary>
    private async Task ApplyAccountsAsync(bool starting, CancellationToken cancellationToken)
    {
        var listed = directory?.Accounts ?? [new BrokerAccount(BrokerAccount.GlobalName)];
        var globalOnly = listed.All(a => a.IsGlobal || IsSystem(a));
        var wanted = new Dictionary<string, AccountJetStreamLimits?>(StringComparer.Ordinal);
        foreach (var account in listed)
        {
            if (IsSystem(account))
            {
                continue;
            }

            var limits = account.JetStream;
            if (account.IsGlobal)
            {
                var had = FindAccount(account.Name) is not null;
                limits = globalOnly && (starting || had) ? AccountJetStreamLimits.Unlimited : null;
            }

            wanted[account.Name] = limits;
        }

        List<JetStreamAccount> stop = [];
        List<JetStreamDisabledAccount> silence = [];
        List<JetStreamAccount> start = [];
        List<string> disable = [];
        lock (accountsGate)
        {
            foreach (var (name, account) in accounts)
            {
                if (!wanted.TryGetValue(name, out var limits) || limits is null)
                {
                    stop.Add(account);
                }
                else
                {
                    account.Limits = limits;
                }
            }

            foreach (var (name, responder) in disabled)
            {
                if (!wanted.TryGetValue(name, out var limits) || limits is not null)
                {
                    silence.Add(responder);
                }
            }

            foreach (var account in stop)
            {
                accounts.Remove(account.Name);
                Interlocked.Add(ref retiredApiTotal, account.Api.Total);
                Interlocked.Add(ref retiredApiErrors, account.Api.Errors);
            }

            foreach (var responder in silence)
            {
                disabled.Remove(responder.Account);
            }

            foreach (var (name, limits) in wanted)
            {
                if (limits is not null && !accounts.ContainsKey(name))
                {
                    var account = new JetStreamAccount(this, name, limits);
                    accounts.Add(name, account);
                    start.Add(account);
                }
                else if (limits is null && !disabled.ContainsKey(name))
                {
                    disable.Add(name);
                }
            }
        }

        // Requests move from one responder to the other with the shortest gap: the old one stops listening first.
        foreach (var account in stop)
        {
            account.Retire();
        }

        foreach (var responder in silence)
        {
            await responder.DisposeAsync().ConfigureAwait(false);
        }

        foreach (var name in disable)
        {
            var responder = new JetStreamDisabledAccount(Bus, name, Options.Domain, Identity);
            lock (accountsGate)
            {
                disabled[name] = responder;
            }
        }

        await ApplySystemAccountAsync(listed.FirstOrDefault(IsSystem)?.Name).ConfigureAwait(false);
        foreach (var account in start)
        {
            await account.StartAsync(cancellationToken).ConfigureAwait(false);
        }

        foreach (var account in stop)
        {
            await account.StopAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Opens the system account's API (<see cref="SystemAccountApi"/>), or moves or closes it when a reload changed the system account.</summary>
    private async Task ApplySystemAccountAsync(string? name)
    {
        if (systemApi?.Account == name)
        {
            return;
        }

        if (Interlocked.Exchange(ref systemApi, null) is { } old)
        {
            await old.DisposeAsync().ConfigureAwait(false);
        }

        if (name is not null)
        {
            systemApi = new SystemAccountApi(this, name);
        }
    }

    private async Task StopAccountsAsync()
    {
        await ApplySystemAccountAsync(null).ConfigureAwait(false);
        List<JetStreamAccount> all;
        List<JetStreamDisabledAccount> responders;
        lock (accountsGate)
        {
            all = [.. accounts.Values];
            responders = [.. disabled.Values];
            accounts.Clear();
            disabled.Clear();
        }

        foreach (var responder in responders)
        {
            await responder.DisposeAsync().ConfigureAwait(false);
        }

        foreach (var account in all)
        {
            await account.StopAsync().ConfigureAwait(false);
        }
    }

    // nats-server gives the system account no JetStream and no info responder. Until the directory says which account
    // is the system one (plan-20 stage 3), the default name stands for it.
    // nats-server's globalAccountOnly ignores the system account whatever its name; it never has JetStream.
    private static bool IsSystem(BrokerAccount account) => account.IsSystem;
}
