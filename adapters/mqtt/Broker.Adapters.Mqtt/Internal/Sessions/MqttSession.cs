using Broker.Adapters.Mqtt.Internal.Connections;

namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>
/// A session in the broker's memory: the subscriptions of a client id and the state that outlives one connection.
/// <see cref="SessionManager"/> binds it to at most one connection at a time.
/// </summary>
internal sealed class MqttSession
{
    // Guarded by the session itself (`lock (this)`, docs/locks.md's MqttSession.gate): a Lock of its own was 40 B on
    // every session (issue 25); nothing else locks a session.
    private FilterTable<SubscriptionRecord> subscriptions;

    // The QoS 2 and shared-subscription state below is made with its first entry, in one object (Qos2State) made with
    // the first of them: most sessions never have any, and a session is resident as long as its client stays connected
    // (five fields of their own were 40 B on every session; issue 25). Guarded by the session's lock.
    private Qos2State? qos2;

    private HashSet<ushort>? awaitingRelease
    {
        get => qos2?.AwaitingRelease;
        set => (qos2 ??= new()).AwaitingRelease = value;
    }

    // The incoming QoS 2 publishes held until PUBREL (a persistent session on JetStream), by packet id.
    private Dictionary<ushort, HeldPublish>? held
    {
        get => qos2?.Held;
        set => (qos2 ??= new()).Held = value;
    }

    // The identifiers read back from the store after a restart and not resent since (see TryAwaitRelease).
    private HashSet<ushort>? restored
    {
        get => qos2?.Restored;
        set => (qos2 ??= new()).Restored = value;
    }

    private HashSet<ushort>? releasing
    {
        get => qos2?.Releasing;
        set => (qos2 ??= new()).Releasing = value;
    }

    private List<KeptDelivery>? kept
    {
        get => qos2?.Kept;
        set => (qos2 ??= new()).Kept = value;
    }

    private Task saving = Task.CompletedTask;

    public MqttSession(string clientId, SessionRecord? record = null)
    {
        ClientId = clientId;
        if (record is not null)
        {
            ExpiryInterval = record.ExpiryInterval;
            if (record.Releasing is { Count: > 0 } ids)
            {
                releasing = [.. ids];
            }

            if (record.Kept is { Count: > 0 } deliveries)
            {
                kept = [.. deliveries];
            }
            foreach (var subscription in record.Subscriptions)
            {
                subscriptions.Set(subscription.Filter, subscription);
            }
        }
    }

    public string ClientId { get; }

    /// <summary>The connection bound to the session, or <see langword="null"/> while it is disconnected. Set by the manager.</summary>
    public MqttConnection? Connection { get; set; }

    /// <summary>Seconds the session outlives a disconnect (see <see cref="SessionRecord.ExpiryInterval"/>).</summary>
    public uint ExpiryInterval { get; set; }

    /// <summary>Environment.TickCount64 of the last disconnect, or 0 while connected.</summary>
    public long DisconnectedAt { get; set; }

    public bool Persistent => ExpiryInterval > 0;

    /// <summary>The will of the last connection, waiting for its delay while the session is disconnected. Set by the manager, under its gate.</summary>
    public DelayedWill? PendingWill { get; set; }

    public SubscriptionRecord[] Subscriptions
    {
        get
        {
            lock (this)
            {
                return subscriptions.ToArray();
            }
        }
    }

    /// <summary>Adds or replaces a subscription; returns whether one existed for the filter.</summary>
    public bool SetSubscription(SubscriptionRecord record)
    {
        lock (this)
        {
            var existed = subscriptions.ContainsKey(record.Filter);
            subscriptions.Set(record.Filter, record);
            return existed;
        }
    }

    public bool RemoveSubscription(string filter)
    {
        lock (this)
        {
            return subscriptions.Remove(filter);
        }
    }

    /// <summary>
    /// Records an incoming QoS 2 packet id until its PUBREL: returns <see langword="false"/> when the id is already
    /// waiting, so a resent PUBLISH is not delivered (method B) or held (method A) twice.
    /// </summary>
    /// <remarks>
    /// An identifier read back after a restart may be one whose PUBCOMP went out just before the broker stopped, with
    /// the removal of its record lost (a machine crash before the removal reached the disk): the client may use it
    /// again for a new message. A resend carries DUP
    /// (MQTT-3.3.1-1) and a new message does not, so for those identifiers the flag tells them apart.
    /// </remarks>
    public bool TryAwaitRelease(ushort packetId, bool duplicate)
    {
        lock (this)
        {
            if (restored?.Remove(packetId) == true)
            {
                return !duplicate;
            }

            return (awaitingRelease ??= []).Add(packetId);
        }
    }

    /// <summary>
    /// Takes back held publishes whose record may be out of date: read from the store (a session resumed after a
    /// restart), or whose delivery or record's removal failed.
    /// </summary>
    public void RestoreHeld(IEnumerable<HeldPublish> publishes)
    {
        lock (this)
        {
            foreach (var publish in publishes)
            {
                if ((awaitingRelease ??= []).Add(publish.PacketId))
                {
                    (restored ??= []).Add(publish.PacketId);
                    (held ??= [])[publish.PacketId] = publish;
                }
            }
        }
    }

    /// <summary>Holds the publish of an exchange <see cref="TryAwaitRelease"/> started, until its PUBREL.</summary>
    public void Hold(HeldPublish publish)
    {
        lock (this)
        {
            (held ??= [])[publish.PacketId] = publish;
        }
    }

    /// <summary>Ends the exchange of a held publish (PUBREL received) and hands it over for delivery; false when none is held.</summary>
    public bool TryTakeHeld(ushort packetId, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out HeldPublish? publish)
    {
        lock (this)
        {
            publish = null;
            if (held is null || !held.Remove(packetId, out publish))
            {
                return false;
            }

            restored?.Remove(packetId);
            awaitingRelease?.Remove(packetId);
            return true;
        }
    }

    /// <summary>Ends the QoS 2 exchange of a packet id (PUBREL received, or the exchange refused); returns whether it was waiting.</summary>
    public bool Release(ushort packetId)
    {
        lock (this)
        {
            restored?.Remove(packetId);
            held?.Remove(packetId);
            return awaitingRelease?.Remove(packetId) == true;
        }
    }

    public int AwaitingReleaseCount
    {
        get
        {
            lock (this)
            {
                return awaitingRelease?.Count ?? 0;
            }
        }
    }

    /// <summary>Records an outgoing QoS 2 exchange between PUBREC and PUBCOMP; its identifier stays taken meanwhile.</summary>
    public void AddReleasing(ushort packetId)
    {
        lock (this)
        {
            (releasing ??= []).Add(packetId);
        }
    }

    /// <summary>Ends an outgoing QoS 2 exchange (PUBCOMP received); returns whether it was waiting.</summary>
    public bool RemoveReleasing(ushort packetId)
    {
        lock (this)
        {
            return releasing?.Remove(packetId) == true;
        }
    }

    /// <summary>Whether an outgoing QoS 2 exchange holds the identifier.</summary>
    public bool IsReleasing(ushort packetId)
    {
        lock (this)
        {
            return releasing?.Contains(packetId) == true;
        }
    }

    /// <summary>The identifiers whose PUBREL is sent again when the client reconnects.</summary>
    public ushort[] Releasing
    {
        get
        {
            lock (this)
            {
                return releasing is null ? [] : [.. releasing];
            }
        }
    }

    /// <summary>Keeps a shared subscription's QoS 2 delivery for the session (its connection closed before PUBREC).</summary>
    public void Keep(KeptDelivery delivery)
    {
        lock (this)
        {
            (kept ??= []).Add(delivery);
        }
    }

    /// <summary>Forgets a kept delivery (PUBREC came, or it was dropped); false when none has the sequence.</summary>
    public bool RemoveKept(ulong sequence)
    {
        lock (this)
        {
            return kept?.RemoveAll(k => k.Sequence == sequence) > 0;
        }
    }

    /// <summary>The kept deliveries, sent again when the client reconnects.</summary>
    public KeptDelivery[] Kept
    {
        get
        {
            lock (this)
            {
                return kept is null ? [] : [.. kept];
            }
        }
    }

    public SessionRecord ToRecord()
    {
        lock (this)
        {
            return new(ClientId, subscriptions.ToArray(), ExpiryInterval, releasing is not { Count: > 0 } ? null : [.. releasing], kept is not { Count: > 0 } ? null : [.. kept]);
        }
    }

    /// <summary>Stores the session after its earlier saves, in order, without making the caller wait.</summary>
    public void ScheduleSave(ISessionStore store)
    {
        lock (this)
        {
            if (saving.IsCompleted && !Persistent)
            {
                // Nothing to order after and nothing to store (a clean session): no continuation kept per session.
                return;
            }

            saving = saving.ContinueWith(
                static (_, state) =>
                {
                    var (session, store) = ((MqttSession, ISessionStore))state!;
                    return session.Persistent ? store.SaveAsync(session.ToRecord(), CancellationToken.None).AsTask() : Task.CompletedTask;
                },
                (this, store),
                CancellationToken.None,
                TaskContinuationOptions.None,
                TaskScheduler.Default).Unwrap();
        }
    }

    /// <summary>Waits for the scheduled saves.</summary>
    public Task SavedAsync()
    {
        lock (this)
        {
            return saving;
        }
    }

    /// <summary>A session's QoS 2 exchanges and kept shared deliveries, each set made with its first entry.</summary>
    private sealed class Qos2State
    {
        public HashSet<ushort>? AwaitingRelease;
        public Dictionary<ushort, HeldPublish>? Held;
        public HashSet<ushort>? Restored;
        public HashSet<ushort>? Releasing;
        public List<KeptDelivery>? Kept;
    }
}
