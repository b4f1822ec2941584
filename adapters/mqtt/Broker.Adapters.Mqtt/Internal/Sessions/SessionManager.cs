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
/// The sessions of one broker account by client id (the same id in two accounts is two sessions, as nats-server keeps a
/// session manager per account, <c>mqttAccountSessionManager</c>): binds a connecting client to its session (new,
/// resumed or cleaned), takes a session over from a connection still using it (MQTT-3.1.4-2; the older connection is
/// closed), and expires sessions that outlived their interval. Like nats-server, a client id that takes a session over
/// again within a second of the last takeover is "flapping": the newcomer is held for a second and refused. The
/// account's state is loaded before a client is attached (<see cref="Accounts.MqttAccount.WaitReadyAsync"/>).
/// </summary>
internal sealed class SessionManager : IDisposable
{
    /// <summary>nats-server's <c>mqttSessFlappingJailDur</c>.</summary>
    public static readonly TimeSpan FlapJail = TimeSpan.FromSeconds(1);

    private readonly ILogger logger;
    private ISessionStore store;
    /// <summary>The peak of live sessions from which the map is replaced by a smaller one once a quarter is left.</summary>
    internal const int ShrinkLiveFrom = 1024;

    // Changed only under the gate; readers take the field as it is (a replaced map is a snapshot of its moment).
    private ConcurrentDictionary<string, MqttSession> live = new(StringComparer.Ordinal);
    private int livePeak;
    private readonly ConcurrentDictionary<string, long> flappers = new(StringComparer.Ordinal);

    // Sessions read from the store when the state loaded, with the Environment.TickCount64 at which they expire: no
    // connection of this broker held them, so their expiry timer starts here. A client that comes back takes its own
    // out (AttachLockedAsync), and it is resumed from the store.
    private readonly ConcurrentDictionary<string, (SessionRecord Record, long ExpiresAt)> stored = new(StringComparer.Ordinal);

    // Connects and disconnects are rare next to messages, and the store may make round trips: one at a time keeps
    // takeovers simple to reason about.
    private readonly SemaphoreSlim gate = new(1, 1);

    private readonly SessionDiscards discards;

    public SessionManager(ISessionStore store, ILogger? logger = null)
    {
        this.store = store;
        this.logger = logger ?? NullLogger.Instance;
        discards = new SessionDiscards(this.logger);
    }

    /// <summary>Releases of closed clean sessions still under way (tests read it).</summary>
    internal int PendingReleases => discards.Count;

    public ISessionStore Store => store;

    /// <summary>
    /// Called with the last state of a session that ends (cleaned by a clean start, closed without outliving its
    /// connection, or expired), to release what lives outside the session store: its subscriptions' JetStream consumers.
    /// </summary>
    public Func<SessionRecord, Task>? Discarded { get; set; }

    /// <summary>Switches the store; called once, while the account's state loads, before any client is attached.</summary>
    public void UseStore(ISessionStore source) => store = source ?? throw new ArgumentNullException(nameof(source));

    public void Dispose() => gate.Dispose();

    public int Count => live.Count;

    /// <summary>The sessions bound to a connection now.</summary>
    public IEnumerable<MqttConnection> Connections
    {
        get
        {
            foreach (var session in live.Values)
            {
                if (session.Connection is { } connection)
                {
                    yield return connection;
                }
            }
        }
    }

    /// <summary>
    /// Forgets a session (under the gate). A ConcurrentDictionary never shrinks: after 10,000 sessions left, the map
    /// kept 140 KB of buckets (issue 25), so once a quarter of its peak is left it is copied into a fresh one.
    /// </summary>
    private bool RemoveLiveLocked(string clientId, MqttSession session)
    {
        if (!live.TryRemove(new KeyValuePair<string, MqttSession>(clientId, session)))
        {
            return false;
        }

        var count = live.Count;
        if (livePeak >= ShrinkLiveFrom && count <= livePeak / 4)
        {
            Volatile.Write(ref live, new ConcurrentDictionary<string, MqttSession>(live, StringComparer.Ordinal));
            livePeak = count;
            LiveShrinks++;
        }

        return true;
    }

    /// <summary>Fresh live-session maps made so far (tests read it).</summary>
    internal int LiveShrinks { get; private set; }

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

    /// <summary>Whether the session of <paramref name="key"/> (a client id) was taken over less than <see cref="FlapJail"/> ago.</summary>
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

    /// <summary>Binds <paramref name="connection"/> to the session of <paramref name="clientId"/>.</summary>
    /// <exception cref="SessionStoreUnavailableException">The store failed.</exception>
    public async Task<AttachResult> AttachAsync(MqttConnection connection, string clientId, bool cleanStart, uint expiryInterval, CancellationToken cancellationToken)
    {
        await gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            return await AttachLockedAsync(connection, clientId, cleanStart, expiryInterval, cancellationToken).ConfigureAwait(false);
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

    private async Task<AttachResult> AttachLockedAsync(MqttConnection connection, string clientId, bool cleanStart, uint expiryInterval, CancellationToken cancellationToken)
    {
        var key = clientId;

        // The consumers of this id's last clean session may still be being deleted: the new session's take their names.
        await discards.WaitAsync(clientId).ConfigureAwait(false);
        stored.TryRemove(key, out _);
        live.TryGetValue(key, out var session);
        var loaded = false;
        if (session is null && await store.LoadAsync(clientId, cancellationToken).ConfigureAwait(false) is { } record)
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
        if (session?.PendingWill is { } pendingWill)
        {
            // MQTT-3.1.3-9: a connection that resumes the session before the will's delay ends drops it; a clean start
            // ends the session, which sends it (MQTT-3.1.2-8).
            session.PendingWill = null;
            await pendingWill.ResolveAsync(publish: !present).ConfigureAwait(false);
        }
        if (present && loaded)
        {
            // Resumed after a restart: QoS 2 publishes it left between PUBREC and PUBREL are recognised when resent and
            // delivered at their PUBREL.
            session!.RestoreHeld(await store.LoadHeldAsync(clientId, cancellationToken).ConfigureAwait(false));
        }

        if (session is null || !present)
        {
            if (session is not null)
            {
                // Replaced: the connection still bound to it (taken over below) must not store it when it closes.
                session.Connection = null;
                await DiscardAsync(session).ConfigureAwait(false);
                if (session.Persistent)
                {
                    await store.DeleteAsync(clientId, cancellationToken).ConfigureAwait(false);
                }
            }

            session = new MqttSession(clientId);
        }

        session.ExpiryInterval = expiryInterval;
        session.Connection = connection;
        session.DisconnectedAt = 0;
        live[key] = session;
        livePeak = Math.Max(livePeak, live.Count);
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

        if (session.Persistent)
        {
            await store.SaveAsync(session.ToRecord(), cancellationToken).ConfigureAwait(false);
        }

        return new AttachResult(session, present, previous);
    }

    /// <summary>Whether a stored record's session expired while it was disconnected (its wall-clock disconnect time).</summary>
    public static bool IsExpired(SessionRecord record)
        => record.DisconnectedAt > 0 && record.ExpiryInterval != uint.MaxValue
            && DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - record.DisconnectedAt >= record.ExpiryInterval * 1000L;

    /// <summary>
    /// Unbinds a closing connection: a session that does not outlive it is forgotten, any other is stored, and keeps
    /// <paramref name="will"/> until its delay ends. Returns whether the session took the will: false when it was taken
    /// over or ends now (the caller then publishes or drops the will itself).
    /// </summary>
    public async Task<bool> DetachAsync(MqttConnection connection, MqttSession session, uint? expiryInterval, DelayedWill? will = null)
    {
        await gate.WaitAsync().ConfigureAwait(false);
        try
        {
            if (!ReferenceEquals(session.Connection, connection))
            {
                // Taken over: the session belongs to the newer connection now.
                return false;
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

            if (!session.Persistent)
            {
                RemoveLiveLocked(session.ClientId, session);

                // Started here (what it releases is decided under the gate), not awaited under it: see SessionDiscards.
                if (Discarded is { } discarded)
                {
                    discards.Start(discarded, session.ToRecord());
                }

                await DeleteQuietlyAsync(session.ClientId).ConfigureAwait(false);
                return false;
            }

            session.DisconnectedAt = Math.Max(Environment.TickCount64, 1);
            session.PendingWill = will;
            var record = session.ToRecord() with { DisconnectedAt = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() };
            await StoreQuietlyAsync(session.ClientId, "save", () => store.SaveAsync(record, CancellationToken.None)).ConfigureAwait(false);
            return true;
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

    /// <summary>
    /// Starts the expiry timer of a session read from the store when the state loads (after a restart): it expires
    /// its interval after its disconnect, or after now when the broker stopped without seeing it disconnect.
    /// </summary>
    public void ScheduleStored(SessionRecord record)
    {
        ArgumentNullException.ThrowIfNull(record);
        if (record.ExpiryInterval == uint.MaxValue)
        {
            // Never expires; kept for HoldsConsumer.
            stored[record.ClientId] = (record, long.MaxValue);
            return;
        }

        var away = record.DisconnectedAt > 0 ? Math.Max(0, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - record.DisconnectedAt) : 0;
        stored[record.ClientId] = (record, Environment.TickCount64 + (record.ExpiryInterval * 1000L) - away);
    }

    /// <summary>
    /// Whether a session other than <paramref name="clientId"/>'s, live or stored, has a subscription on
    /// <paramref name="consumer"/> (a shared subscription's group consumer).
    /// </summary>
    public bool HoldsConsumer(string consumer, string clientId)
    {
        foreach (var (key, session) in live)
        {
            if (!string.Equals(key, clientId, StringComparison.Ordinal) && Holds(session.Subscriptions, consumer))
            {
                return true;
            }
        }

        foreach (var (key, entry) in stored)
        {
            if (!string.Equals(key, clientId, StringComparison.Ordinal) && !live.ContainsKey(key) && Holds(entry.Record.Subscriptions, consumer))
            {
                return true;
            }
        }

        return false;

        static bool Holds(IEnumerable<SubscriptionRecord> subscriptions, string consumer)
            => subscriptions.Any(s => string.Equals(s.Consumer, consumer, StringComparison.Ordinal));
    }

    /// <summary>Publishes the wills whose delay ended and forgets disconnected sessions whose expiry interval has passed.</summary>
    public async Task ExpireAsync(long now)
    {
        await ExpireStoredAsync(now).ConfigureAwait(false);
        foreach (var (key, session) in live)
        {
            var disconnectedAt = session.DisconnectedAt;
            if (session.PendingWill is { } will && now >= will.DueAt)
            {
                await PublishDelayedWillAsync(session, will).ConfigureAwait(false);
            }

            if (disconnectedAt == 0 || session.ExpiryInterval == uint.MaxValue || now - disconnectedAt < session.ExpiryInterval * 1000L)
            {
                continue;
            }

            await gate.WaitAsync().ConfigureAwait(false);
            try
            {
                if (session.Connection is null && session.DisconnectedAt == disconnectedAt
                    && RemoveLiveLocked(key, session))
                {
                    // The session ends before the will's delay: the will goes now (MQTT-3.1.2-8).
                    if (session.PendingWill is { } endingWill)
                    {
                        session.PendingWill = null;
                        await endingWill.ResolveAsync(publish: true).ConfigureAwait(false);
                    }

                    await DiscardAsync(session).ConfigureAwait(false);
                    await DeleteQuietlyAsync(session.ClientId).ConfigureAwait(false);
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

    /// <summary>Deletes the sessions read from the store whose timer ran out while their client stayed away.</summary>
    private async Task ExpireStoredAsync(long now)
    {
        foreach (var (clientId, entry) in stored)
        {
            if (now < entry.ExpiresAt)
            {
                continue;
            }

            await gate.WaitAsync().ConfigureAwait(false);
            try
            {
                if (stored.TryRemove(new KeyValuePair<string, (SessionRecord, long)>(clientId, entry)) && !live.ContainsKey(clientId))
                {
                    if (Discarded is { } discarded)
                    {
                        await discarded(entry.Record).ConfigureAwait(false);
                    }

                    await DeleteQuietlyAsync(clientId).ConfigureAwait(false);
                }
            }
            finally
            {
                gate.Release();
            }
        }
    }

    /// <summary>
    /// Drops the wills waiting for their delay, closing the bus connections kept for them: the account's MQTT state is
    /// retired (its connected clients lose their wills too) or the adapter stops.
    /// </summary>
    public async Task DropPendingWillsAsync()
    {
        await gate.WaitAsync().ConfigureAwait(false);
        try
        {
            foreach (var session in live.Values)
            {
                if (session.PendingWill is { } will)
                {
                    session.PendingWill = null;
                    await will.ResolveAsync(publish: false).ConfigureAwait(false);
                }
            }
        }
        finally
        {
            gate.Release();
        }
    }

    private async Task PublishDelayedWillAsync(MqttSession session, DelayedWill will)
    {
        await gate.WaitAsync().ConfigureAwait(false);
        try
        {
            if (!ReferenceEquals(session.PendingWill, will))
            {
                // A connection resumed the session meanwhile.
                return;
            }

            session.PendingWill = null;
        }
        finally
        {
            gate.Release();
        }

        await will.ResolveAsync(publish: true).ConfigureAwait(false);
    }

    /// <summary>
    /// A store call where no client waits for the outcome (disconnect, expiry): a failure is logged and the broker
    /// goes on; the session stays as it was stored last.
    /// </summary>
    // Not a lambda at the call: the expiry sweep runs four times a second over every session, and a lambda capturing the
    // loop's session made its closure at each iteration (32 B per session per sweep, 1.3 MB/s at 10,000 idle sessions:
    // the GC's first generation filled and committed more memory while nothing happened; issue 25).
    private Task DeleteQuietlyAsync(string clientId)
        => StoreQuietlyAsync(clientId, "delete", () => store.DeleteAsync(clientId, CancellationToken.None));

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
