using System.Collections.Concurrent;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.JetStream;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Accounts;

/// <summary>
/// The MQTT state of each broker account (<see cref="MqttAccount"/>), made with the account's first MQTT client as
/// nats-server makes an account's session manager and streams (<c>getOrCreateMQTTAccountSessionManager</c>), so a
/// broker, or an account, that never sees an MQTT client has no <c>$MQTT_</c> streams. When the broker runs JetStream
/// (or <see cref="MqttOptions.JetStreamDomain"/> names one) the state is on the account's JetStream; an account that
/// has none refuses its clients and is asked again at the next CONNECT (a reload may have given it JetStream), as
/// nats-server asks again. Without JetStream every account's state is in memory.
/// </summary>
/// <remarks>
/// A reload that removes an account, or takes its JetStream away, retires its state: its MQTT clients are closed
/// (their sessions cannot be kept any longer) and the next CONNECT of the account starts over.
/// </remarks>
internal sealed class MqttAccounts : IAsyncDisposable
{
    private readonly ConcurrentDictionary<string, MqttAccount> accounts = new(StringComparer.Ordinal);
    private readonly Lock gate = new();
    private readonly MqttOptions options;
    private readonly IMessageBus bus;
    private readonly bool jetStreamEnabled;
    private readonly ILogger logger;
    private readonly CancellationTokenSource stopping = new();
    private IAccountDirectory? directory;
    private IDisposable? watch;

    /// <param name="options">The adapter's options.</param>
    /// <param name="bus">The bus the accounts' JetStream clients are made on.</param>
    /// <param name="jetStreamEnabled">Whether the broker runs JetStream (<see cref="ServerFeature.JetStream"/>).</param>
    /// <param name="logger">The adapter's logger.</param>
    public MqttAccounts(MqttOptions options, IMessageBus bus, bool jetStreamEnabled, ILogger logger)
    {
        this.options = options;
        this.bus = bus;
        this.jetStreamEnabled = jetStreamEnabled;
        this.logger = logger;
    }

    /// <summary>Loads an account's state instead of JetStream or memory (tests hold the loading with it).</summary>
    public Func<MqttAccount, Task>? Loader { get; set; }

    /// <summary>The accounts whose state exists now.</summary>
    public ICollection<MqttAccount> All => accounts.Values;

    /// <summary>The account's state, made (and its loading started) when it is the account's first client.</summary>
    /// <exception cref="ObjectDisposedException">The adapter is stopping.</exception>
    public MqttAccount Get(string name)
    {
        if (accounts.TryGetValue(name, out var account))
        {
            return account;
        }

        lock (gate)
        {
            ObjectDisposedException.ThrowIf(stopping.IsCancellationRequested, this);
            if (accounts.TryGetValue(name, out account))
            {
                return account;
            }

            account = new MqttAccount(name, logger);
            accounts[name] = account;
            account.StartLoading(LoadAsync);
            return account;
        }
    }

    /// <summary>Follows reloads: accounts removed or left without JetStream have their state retired.</summary>
    public void Watch(IAccountDirectory accountDirectory)
    {
        directory = accountDirectory;
        watch = accountDirectory.Watch(OnAccountChanged);
    }

    /// <summary>Forgets disconnected sessions whose expiry interval has passed, in every account.</summary>
    public async Task ExpireAsync(long now)
    {
        foreach (var account in accounts.Values)
        {
            await account.Sessions.ExpireAsync(now).ConfigureAwait(false);
        }
    }

    public async ValueTask DisposeAsync()
    {
        lock (gate)
        {
            if (stopping.IsCancellationRequested)
            {
                return;
            }

            stopping.Cancel();
        }

        watch?.Dispose();
        foreach (var account in accounts.Values)
        {
            if (account.JetStream is not null)
            {
                // Its loading ends with the cancellation; a Loader's (tests) is not waited for.
                await account.Ready.ConfigureAwait(false);
            }

            await account.Sessions.DropPendingWillsAsync().ConfigureAwait(false);
            await account.DisposeAsync().ConfigureAwait(false);
        }

        accounts.Clear();
        stopping.Dispose();
    }

    private Task LoadAsync(MqttAccount account)
    {
        if (Loader is { } load)
        {
            return load(account);
        }

        // With js_domain the state lives in that domain's JetStream, wherever it runs (nats-server's leaf node setup), so
        // the local JetStream need not be on.
        if (!jetStreamEnabled && options.JetStreamDomain is null)
        {
            MqttLog.StateInMemory(logger, account.Name);
            return Task.CompletedTask;
        }

        if (jetStreamEnabled && options.JetStreamDomain is null && directory?.Accounts is { } listed
            && listed.FirstOrDefault(a => a.Name == account.Name) is { } current && (current.IsSystem || !HasJetStream(current, listed)))
        {
            // The system account never has JetStream (nor an API that would say so), and an account a reload has just
            // left without it may still be answered by its JetStream for a moment (the engine applies the reload on its
            // own loop, after this adapter's watcher has retired the account's state): refused at once, as nats-server
            // does, so no state is built on a JetStream that is going away.
            account.Refusal = $"lookup sessions stream for account \"{account.Name}\": JetStream not enabled for account ({JetStreamApiException.NotEnabledForAccount})";
            accounts.TryRemove(new KeyValuePair<string, MqttAccount>(account.Name, account));
            return Task.CompletedTask;
        }

        return LoadOnJetStreamAsync(account);
    }

    private async Task LoadOnJetStreamAsync(MqttAccount account)
    {
        var jetStream = new MqttJetStream(account, bus, options, logger);
        account.JetStream = jetStream;
        await jetStream.LoadAsync(stopping.Token).ConfigureAwait(false);
        if (account.Refusal is not null)
        {
            // Not kept: the next CONNECT of the account asks again, as nats-server does.
            accounts.TryRemove(new KeyValuePair<string, MqttAccount>(account.Name, account));
            await account.DisposeAsync().ConfigureAwait(false);
        }
    }

    private void OnAccountChanged(AccountChange change)
    {
        // Any change may matter to another account: one added takes JetStream from $G.
        var listed = directory!.Accounts;
        foreach (var account in accounts.Values)
        {
            var current = listed.FirstOrDefault(a => a.Name == account.Name);
            var reason = current is null ? $"account \"{account.Name}\" was removed"
                : account.JetStream is not null && !HasJetStream(current, listed) ? $"account \"{account.Name}\" has no JetStream any more"
                : null;
            if (reason is not null)
            {
                _ = RetireAsync(account, reason);
            }
        }
    }

    /// <summary>
    /// Whether the engine gives the account JetStream after a reload: its own limits, or for <c>$G</c> no other
    /// account configured (nats-server's <c>globalAccountOnly</c>; a reload that adds accounts takes it from <c>$G</c>).
    /// </summary>
    private bool HasJetStream(BrokerAccount account, IReadOnlyList<BrokerAccount> listed)
        => options.JetStreamDomain is not null
            || (account.IsGlobal ? listed.All(a => a.IsGlobal || a.IsSystem) : account.JetStream is not null);

    private async Task RetireAsync(MqttAccount account, string reason)
    {
        if (!accounts.TryRemove(new KeyValuePair<string, MqttAccount>(account.Name, account)))
        {
            return;
        }

        MqttLog.AccountStateRetired(logger, account.Name, reason);
        foreach (var connection in account.Sessions.Connections)
        {
            connection.CloseForAccountChange(reason);
        }

        await account.Ready.ConfigureAwait(false);
        await account.Sessions.DropPendingWillsAsync().ConfigureAwait(false);
        await account.DisposeAsync().ConfigureAwait(false);
    }
}
