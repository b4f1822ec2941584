using Broker.Abstractions;
using Broker.JetStream.Internal.Events;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// One consumer of a stream (nats-server's <c>consumer</c>): the owner the rest of the account talks to. It wires
/// collaborators that each keep their own state: where it is in the stream (<see cref="StreamCursor"/>), what it
/// delivered and awaits acknowledgements for and what to redeliver (<see cref="AckTracker"/>, with
/// <see cref="ConsumerEvents"/> for advisories and ack metrics), how deliveries are paced (<see cref="DeliveryPacer"/>) or paused (<see cref="ConsumerPause"/>),
/// which pull request may take them (<see cref="ConsumerPriority"/>, 2.11's priority groups), which message goes next (<see cref="DeliverySelector"/>), how they look on the wire (<see cref="DeliveryFormat"/>), who sends them (<see cref="DeliveryRunner"/>, its base class, control
/// messages from the <see cref="ConsumerOutbox"/> first), the front end that says where they go: a deliver subject
/// (<see cref="PushDelivery"/>) or the reply subjects of pull requests (<see cref="PullRequests"/>), and when nobody
/// used it for too long (<see cref="InactivityClock"/>); the stream's <see cref="ConsumerInbox"/> is its bus side. The consumer takes
/// what comes in (acknowledgements, pull requests, flow-control replies, timers, the stream's events:
/// <c>.Inbound.cs</c>), prepares each send (<c>.Delivery.cs</c>), and reports and updates itself (<c>.Info.cs</c>).
/// </summary>
/// <remarks>
/// <c>gate</c> guards the state of every collaborator; none takes a lock of its own, and their timers call back into
/// the consumer, which takes it. Everything the consumer sends goes out through one delivery runner at a time, outside
/// the lock, so control messages and deliveries keep their order and no bus call is made under the lock.
/// </remarks>
internal sealed partial class Consumer : DeliveryRunner, IConsumerTimers
{
    private readonly MessageStream stream;
    private readonly Lock gate = new();
    // The collaborators used only sometimes (outbox, events, pacer, inactivity, pause, priority, flow control), made with the first.
    private ConsumerSideParts? side;
    private readonly StreamCursor cursor;
    private readonly AckTracker acks;
    // Made with the first delivery or acknowledgement (FormatLocked): an idle consumer holds none (64 B, issue 25).
    private DeliveryFormat? format;
    private DeliverySelector selector;
    private readonly PushDelivery? push;
    private readonly PullRequests? pull;
    private ConsumerConfig config;
    private bool closed;

    private Consumer(MessageStream stream, string name, ConsumerConfig config, IConsumerStore store, long created)
    {
        this.stream = stream;
        Name = name;
        this.config = config;
        Store = store;
        Created = created;
        cursor = new StreamCursor(stream.Store);
        cursor.SetFilters(config);
        acks = new AckTracker(config, store, this);

        // The stream's inbox (the ack and pull-request subscriptions) must exist before the create reply goes out: the
        // client's first pull request follows the reply at once, and one published before the inbox subscribed is lost
        // (nobody else answers it). Made here, not by the first delivery's Client: the kick after the reply can be late.
        _ = stream.ConsumerInbox;

        // Push or pull is fixed for a consumer's life (an update may not change it).
        if (config.IsPush)
        {
            push = new PushDelivery(this);
        }
        else
        {
            pull = new PullRequests(config, Account.Interest, Outbox, () => cursor.NumPending() + (ulong)acks.RedeliverQueueCount == 0, this);
        }

        ConfigureSideParts(config);
    }

    public string Name { get; }

    // What collaborators read through the consumer rather than hold (IConsumerTimers).
    string IConsumerTimers.StreamName => stream.Name;
    ISubjectInterest? IConsumerTimers.Interest => Account.Interest;
    public ConsumerOutbox Outbox => Side.Outbox ??= new();
    private ConsumerSideParts Side => side ??= new();

    public long Created { get; }

    public IConsumerStore Store { get; }

    /// <summary>The client of the stream's <see cref="ConsumerInbox"/>, shared by its consumers.</summary>
    public override IBusClient Client => stream.ConsumerInbox.Client;

    // Read through the stream, not held: every field is 8 B of each of 10,000 idle MQTT QoS 1 consumers (issue 25).
    private JetStreamAccount Account => stream.Account;

    /// <summary>The ack subject's format; the stream's <see cref="ConsumerInbox"/> reads acknowledgements with it. Any thread.</summary>
    public DeliveryFormat Format => Volatile.Read(ref format) ?? FormatUnderLock();

    // Made under the lock, so a configuration update (which sets headers_only on it) never misses the one made.
    private DeliveryFormat FormatLocked => format ??= new DeliveryFormat(stream.Name, Name, config.HeadersOnly);

    private DeliveryFormat FormatUnderLock()
    {
        lock (gate)
        {
            return FormatLocked;
        }
    }

    public MessageStream Stream => stream;

    /// <summary>The priority groups (2.11), null for a consumer without; <c>CONSUMER.UNPIN</c> goes there.</summary>
    public ConsumerPriority? Priority => side?.Priority;

    public ConsumerConfig Config
    {
        get
        {
            lock (gate)
            {
                return config;
            }
        }
    }

    public bool IsDurable => config.IsDurable;

    /// <inheritdoc/>
    public ConsumerEvents Events => Side.Events ??= new ConsumerEvents(stream.Name, Name, Account.Interest, Account.Options.Domain, Outbox, Account.Logger, Account.Name);

    private ConsumerPause Pause => Side.Pause ??= new ConsumerPause(this, Account.Engine.Pauses, Events);

    /// <summary>
    /// Takes a configuration's inactivity threshold and priority groups: the clock is made with the first threshold, the
    /// groups with the first groups or priority policy. Lock held (or constructing).
    /// </summary>
    private void ConfigureSideParts(ConsumerConfig current)
    {
        if (side?.Inactivity is not null || InactivityClock.ThresholdOf(current) > 0)
        {
            (Side.Inactivity ??= new InactivityClock(Created, push, pull, () => _ = CheckInactivityAsync(), acks)).Configure(current);
        }

        if ((side?.Priority ?? ConsumerPriority.For(current, gate, cursor, acks, this, Kick)) is { } groups)
        {
            (Side.Priority = groups).Configure(current);
        }
    }

    /// <summary>Creates a new consumer (validated configuration, unique name) positioned by its deliver policy.</summary>
    public static Consumer Create(MessageStream stream, string name, ConsumerConfig config)
    {
        var created = GoTime.NowNanoseconds();
        var store = stream.Store.OpenConsumerStore(StoredConsumerMetadata.StoreConfig(name, config, created));
        var consumer = new Consumer(stream, name, config, store, created);
        lock (consumer.gate)
        {
            consumer.acks.StartAt(consumer.cursor.SelectStart(config));
            if (config.PauseUntil is not null)
            {
                consumer.Pause.Initialize(config.PauseUntil, announce: true);
            }
        }

        return consumer;
    }

    /// <summary>Re-opens a durable consumer from its store after a restart.</summary>
    public static Consumer Restore(MessageStream stream, IConsumerStore store, StoredConsumerMetadata metadata)
    {
        var consumer = new Consumer(stream, metadata.Name, metadata.Config, store, metadata.Created);
        lock (consumer.gate)
        {
            if (metadata.Config.PauseUntil is not null)
            {
                consumer.Pause.Initialize(metadata.Config.PauseUntil, announce: false);
            }

            if (store.HasState)
            {
                // nats-server applyState: positions, ack floor, pending deliveries, redelivery counts.
                var state = store.GetState();
                consumer.cursor.Restore(state);
                consumer.acks.Restore(state);
            }
            else
            {
                consumer.acks.StartAt(consumer.cursor.SelectStart(consumer.config));
            }
        }

        return consumer;
    }

    /// <summary>
    /// Subscribes to acknowledgements, pull requests and flow control, and starts the timers. Delivery starts with the
    /// first <see cref="DeliveryRunner.Kick"/>, which the API sends after its reply, so the create response comes first as from nats-server.
    /// </summary>
    public void Start()
    {
        lock (gate)
        {
            StartLocked();
        }
    }

    /// <summary>
    /// <see cref="Start"/>, returning the info as it stands before anything is delivered (nats-server snapshots it in
    /// <c>setLeader</c> for the create response): a message stored meanwhile may be delivered before the response is
    /// built, and a mirror takes the response's delivered sequence as where its copy starts.
    /// </summary>
    public ConsumerInfoModel StartWithInfo()
    {
        lock (gate)
        {
            StartLocked();
            return InfoLocked();
        }
    }

    private void StartLocked()
    {
        // Acknowledgements and pull requests come through the stream's ConsumerInbox, routed by name.
        if (config.FlowControl)
        {
            Side.FlowControl = Client.Subscribe($"$JS.FC.{stream.Name}.{Name}.*", null, (in BusMessage message) => OnFlowControl(message.Subject));
        }

        push?.Start(config, cursor.LastDelivered, side?.Inactivity is { Threshold: > 0 });

        // nats-server setLeader: replay through what the stream holds now, a full rate-limit bucket.
        var replay = config.ReplayPolicy == ReplayPolicy.Original;
        if (replay || config.RateLimit > 0)
        {
            Side.Pacer ??= new DeliveryPacer(Kick);
        }

        side?.Pacer?.Start(replay, replay ? stream.Store.GetState().LastSequence : 0, config.RateLimit, config.IsPush, stream.Config.MaxMsgSize);
        side?.Inactivity?.Schedule();
        side?.Pause?.Schedule();
        acks.Start();
    }

    /// <summary>Stops delivering, drops the subscription and timers, and keeps (or deletes) the state; the client is the stream's.</summary>
    public async Task StopAsync(bool deleteData)
    {
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            closed = true;
            acks.Stop();
            push?.Stop();
            side?.Stop();

            // Requests still waiting are told, as nats-server tells them "409 Consumer Deleted".
            pull?.Stop();
        }

        // Sends the queued control messages (used when stopping: no data follows).
        Kick();
        if (deleteData)
        {
            // Deleted (API, inactivity, its stream deleted): advised as nats-server's stopWithFlags does, before its stream's advisory.
            Account.Advisories.ConsumerAction(stream.Name, Name, StreamActionKind.Delete);
            await Store.DeleteAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Deletes the consumer: removed from its stream, state deleted (API delete, inactivity).</summary>
    public async Task DeleteAsync()
    {
        stream.RemoveConsumer(this);
        await StopAsync(deleteData: true).ConfigureAwait(false);
    }

    /// <summary>Whether a stored message on <paramref name="subject"/> is one this consumer delivers.</summary>
    public bool Matches(ReadOnlySpan<byte> subject) => cursor.Matches(subject);

    /// <summary>Whether a purge filter overlaps this consumer's filters (nats-server <c>isFilteredMatch</c> on the filter).</summary>
    public bool MatchesFilter(ReadOnlySpan<byte> purgeFilter) => cursor.MatchesFilter(purgeFilter);

    /// <summary>The inactivity clock fired: deletes the consumer when nobody used it for its threshold.</summary>
    private async Task CheckInactivityAsync()
    {
        lock (gate)
        {
            if (closed || side?.Inactivity is not { } clock || !clock.Check(GoTime.NowNanoseconds()))
            {
                return;
            }
        }

        JetStreamLog.InactiveDeleted(Account.Logger, stream.Name, Name, TimeSpan.FromTicks(side!.Inactivity!.Threshold / 100));
        await DeleteAsync().ConfigureAwait(false);
    }
}
