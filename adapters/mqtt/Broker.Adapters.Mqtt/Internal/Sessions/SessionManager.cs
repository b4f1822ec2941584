using System.Collections.Concurrent;
using Broker.Adapters.Mqtt.Internal.Connections;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>The result of <see cref="SessionManager.AttachAsync"/>.</summary>
/// <param name="Session">The session now bound to the connection.</param>
/// <param name="Present">Whether state of an earlier connection was resumed (CONNACK's session present flag).</param>
/// <param name="Previous">The connection of the same client id that was still connected and is now being closed.</param>
internal sealed record AttachResult(MqttSession Session, bool Present, MqttConnection? Previous);

/// <summary>
/// The sessions of the adapter by client id, within the client's broker account (the same id in two accounts is two
/// sessions, as nats-server keeps a session manager per account): binds a connecting client to its session (new, resumed or cleaned),
/// takes a session over from a connection still using it (MQTT-3.1.4-2; the older connection is closed), and expires
/// sessions that outlived their interval. Like nats-server, a client id that takes a session over again within a
/// second of the last takeover is "flapping": the newcomer is held for a second and refused. Until the state is loaded
/// at start (<see cref="Ready"/>: the JetStream streams ensured, retained messages read), connecting clients wait.
/// </summary>
internal sealed class SessionManager : IDisposable
{
    /// <summary>nats-server's <c>mqttSessFlappingJailDur</c>.</summary>
    public static readonly TimeSpan FlapJail = TimeSpan.FromSeconds(1);

    /// <summary>How long a CONNECT waits for the state to be loaded before it is refused (server unavailable).</summary>
    public static readonly TimeSpan ReadyTimeout = TimeSpan.FromSeconds(10);

    private readonly ILogger logger;
    private ISessionStore store;
    private Task ready = Task.CompletedTask;
    private Lazy<Task>? lazyReady;
    private long readyAt;
    private readonly ConcurrentDictionary<string, MqttSession> live = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, long> flappers = new(StringComparer.Ordinal);

    // Connects and disconnects are rare next to messages, and the store may make round trips: one at a time keeps
    // takeovers simple to reason about.
    private readonly SemaphoreSlim gate = new(1, 1);

    public SessionManager(ISessionStore store, ILogger? logger = null)
    {
        this.store = store;
        this.logger = logger ?? NullLogger.Instance;
    }

    public ISessionStore Store => store;

    /// <summary>
    /// Called with the last state of a session that ends (cleaned by a clean start, closed without outliving its
    /// connection, or expired), to release what lives outside the session store: its subscriptions' JetStream consumers.
    /// </summary>
    public Func<SessionRecord, Task>? Discarded { get; set; }
    /// <summary>Completes when the sessions' store is chosen and the state loaded; <see cref="AttachAsync"/> waits for it.</summary>
    public Task Ready
    {
        get => ready;
        set
        {
            ready = value;
            Volatile.Write(ref readyAt, long.MaxValue);
            value.ContinueWith(static (_, manager) => Volatile.Write(ref ((SessionManager)manager!).readyAt, Environment.TickCount64), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
    }

    /// <summary>
    /// Environment.TickCount64 when <see cref="Ready"/> completed (0 when it was from the start), <see cref="long.MaxValue"/>
    /// before: a connection's CONNECT timeout counts from here at the earliest, so a CONNECT that waits for the state
    /// is not closed for it.
    /// </summary>
    public long ReadyAt => Volatile.Read(ref readyAt);

    /// <summary>Switches the store; called once at start, before <see cref="Ready"/> completes.</summary>
    public void UseStore(ISessionStore source) => store = source ?? throw new ArgumentNullException(nameof(source));

    public void Dispose() => gate.Dispose();

    public int Count => live.Count;

    private void SweepFlappers()
    {
        var now = Environment.TickCount64;
        foreach (var (clientId, at) in flappers)
        {
            if (now - at > (long)FlapJail.TotalMilliseconds)
            {
                flappers.TryRemove(new KeyValuePair<string, long>(clientId, at));
            }
        }
    }

    /// <summary>
    /// Makes <see cref="Ready"/> the task <paramref name="load"/> starts, started by the first CONNECT rather than now:
    /// as nats-server creates its MQTT streams with the first MQTT client, a broker that runs JetStream but never sees
    /// one has none of them.
    /// </summary>
    public void ReadyWhenNeeded(Func<Task> load)
    {
        ArgumentNullException.ThrowIfNull(load);
        lazyReady = new Lazy<Task>(() =>
        {
            var loading = load();
            Ready = loading;
            return loading;
        }, LazyThreadSafetyMode.ExecutionAndPublication);
    }

    /// <summary>
    /// The name a session is known by: the client id for <c>$G</c> (and <see langword="null"/>), else the account and the
    /// client id apart by U+0000, which no client id holds (MQTT-1.5.4-2).
    /// </summary>
    public static string Key(string? account, string clientId)
        => account is null or Abstractions.BrokerAccount.GlobalName ? clientId : "\0" + account + "\0" + clientId;

    /// <summary>Whether the session <paramref name="key"/> (<see cref="Key"/>) was taken over less than <see cref="FlapJail"/> ago.</summary>
    public bool IsFlapping(string key)
    {
        if (!flappers.TryGetValue(key, out var at))
        {
            return false;
        }

        if (Environment.TickCount64 - at > (long)FlapJail.TotalMilliseconds)
        {
            flappers.TryRemove(key, out _);
            return false;
        }

        return true;
    }

    /// <summary>
    /// Binds <paramref name="connection"/> to the session of <paramref name="clientId"/> in <paramref name="account"/>.
    /// Only sessions of <c>$G</c> are read from and written to the store: those of other accounts are never persistent
    /// (the connection refuses that before) and live in memory for their connection only.
    /// </summary>
    /// <exception cref="SessionStoreUnavailableException">The state is not loaded in time, or the store failed.</exception>
    public async Task<AttachResult> AttachAsync(MqttConnection connection, string account, string clientId, bool cleanStart, uint expiryInterval, CancellationToken cancellationToken)
    {
        try
        {
            await (lazyReady?.Value ?? Ready).WaitAsync(ReadyTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException ex)
        {
            throw new SessionStoreUnavailableException($"the session state is not loaded yet (waited {ReadyTimeout.TotalSeconds:0}s)", ex);
        }

        await gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var stored = account == Abstractions.BrokerAccount.GlobalName ? null : account;
            return await AttachLockedAsync(connection, stored, clientId, cleanStart, expiryInterval, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is not OperationCanceledException and not SessionStoreUnavailableException)
        {
            throw new SessionStoreUnavailableException("the session store failed: " + ex.Message, ex);
        }
        finally
        {
            gate.Release();
        }
    }

    private async Task<AttachResult> AttachLockedAsync(MqttConnection connection, string? account, string clientId, bool cleanStart, uint expiryInterval, CancellationToken cancellationToken)
    {
        var key = Key(account, clientId);
        live.TryGetValue(key, out var session);
        var loaded = false;
        if (session is null && account is null && await store.LoadAsync(clientId, cancellationToken).ConfigureAwait(false) is { } record)
        {
            loaded = true;
            // Loaded for a clean start too, which discards it below (a restart forgot which sessions were live).
            session = new MqttSession(clientId, record);
            if (IsExpired(record))
            {
                // Stored before a restart and expired since: forgotten, as it would have been had the broker kept running.
                await DiscardAsync(session).ConfigureAwait(false);
                await store.DeleteAsync(clientId, cancellationToken).ConfigureAwait(false);
                session = null;
            }
        }

        var previous = session?.Connection;
        var present = session is not null && !cleanStart && session.Persistent;
        if (present && loaded)
        {
            // Resumed after a restart: QoS 2 publishes it left between PUBREC and PUBREL are still recognised when resent.
            session!.RestoreAwaitingRelease(await store.LoadAwaitingReleaseAsync(clientId, cancellationToken).ConfigureAwait(false));
        }

        if (session is null || !present)
        {
            if (session is not null)
            {
                // Replaced: the connection still bound to it (taken over below) must not store it when it closes.
                session.Connection = null;
                await DiscardAsync(session).ConfigureAwait(false);
                if (session.Persistent && account is null)
                {
                    await store.DeleteAsync(clientId, cancellationToken).ConfigureAwait(false);
                }
            }

            session = new MqttSession(clientId, account: account);
        }

        session.ExpiryInterval = expiryInterval;
        session.Connection = connection;
        session.DisconnectedAt = 0;
        live[key] = session;
        if (previous is not null && !ReferenceEquals(previous, connection))
        {
            flappers[key] = Environment.TickCount64;
            if (flappers.Count > 1024)
            {
                // Clients that took a session over once and never came back; nats-server sweeps its flappers too.
                SweepFlappers();
            }
        }
        else
        {
            previous = null;
        }

        if (session.Persistent && account is null)
        {
            await store.SaveAsync(session.ToRecord(), cancellationToken).ConfigureAwait(false);
        }

        return new AttachResult(session, present, previous);
    }

    /// <summary>Whether a stored record's session expired while it was disconnected (its wall-clock disconnect time).</summary>
    public static bool IsExpired(SessionRecord record)
        => record.DisconnectedAt > 0 && record.ExpiryInterval != uint.MaxValue
            && DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - record.DisconnectedAt >= record.ExpiryInterval * 1000L;

    /// <summary>Unbinds a closing connection: a session that does not outlive it is forgotten, any other is stored.</summary>
    public async Task DetachAsync(MqttConnection connection, MqttSession session, uint? expiryInterval)
    {
        await gate.WaitAsync().ConfigureAwait(false);
        try
        {
            if (!ReferenceEquals(session.Connection, connection))
            {
                // Taken over: the session belongs to the newer connection now.
                return;
            }

            session.Connection = null;
            if (expiryInterval is { } expiry)
            {
                session.ExpiryInterval = expiry;
            }

            try
            {
                await session.SavedAsync().ConfigureAwait(false);
            }
#pragma warning disable CA1031 // A failed earlier save is logged; the final save below still runs.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                MqttLog.SessionStoreFailed(logger, session.ClientId, "save", ex);
            }

            if (!session.Persistent || session.Account is not null)
            {
                live.TryRemove(new KeyValuePair<string, MqttSession>(session.Key, session));
                await DiscardAsync(session).ConfigureAwait(false);
                if (session.Account is null)
                {
                    // The same client id in another account has a record of its own: only $G's are stored.
                    await StoreQuietlyAsync(session.ClientId, "delete", () => store.DeleteAsync(session.ClientId, CancellationToken.None)).ConfigureAwait(false);
                }

                return;
            }

            session.DisconnectedAt = Math.Max(Environment.TickCount64, 1);
            var record = session.ToRecord() with { DisconnectedAt = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() };
            await StoreQuietlyAsync(session.ClientId, "save", () => store.SaveAsync(record, CancellationToken.None)).ConfigureAwait(false);
        }
        finally
        {
            gate.Release();
        }
    }

    private async Task DiscardAsync(MqttSession session)
    {
        if (Discarded is { } discarded)
        {
            await discarded(session.ToRecord()).ConfigureAwait(false);
        }
    }

    /// <summary>Forgets disconnected sessions whose expiry interval has passed.</summary>
    public async Task ExpireAsync(long now)
    {
        foreach (var (key, session) in live)
        {
            var disconnectedAt = session.DisconnectedAt;
            if (disconnectedAt == 0 || session.ExpiryInterval == uint.MaxValue || now - disconnectedAt < session.ExpiryInterval * 1000L)
            {
                continue;
            }

            await gate.WaitAsync().ConfigureAwait(false);
            try
            {
                if (session.Connection is null && session.DisconnectedAt == disconnectedAt
                    && live.TryRemove(new KeyValuePair<string, MqttSession>(key, session)))
                {
                    await DiscardAsync(session).ConfigureAwait(false);
                    await StoreQuietlyAsync(session.ClientId, "delete", () => store.DeleteAsync(session.ClientId, CancellationToken.None)).ConfigureAwait(false);
                }
            }
            finally
            {
                gate.Release();
            }
        }

        foreach (var (clientId, at) in flappers)
        {
            if (now - at > 5 * (long)FlapJail.TotalMilliseconds)
            {
                flappers.TryRemove(new KeyValuePair<string, long>(clientId, at));
            }
        }
    }

    /// <summary>
    /// A store call where no client waits for the outcome (disconnect, expiry): a failure is logged and the broker
    /// goes on; the session stays as it was stored last.
    /// </summary>
    private async Task StoreQuietlyAsync(string clientId, string operation, Func<ValueTask> call)
    {
        try
        {
            await call().ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Logged: a disconnect or expiry must complete whatever the store does.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            MqttLog.SessionStoreFailed(logger, clientId, operation, ex);
        }
    }
}
