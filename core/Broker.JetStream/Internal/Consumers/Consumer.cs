using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// One consumer of a stream (nats-server's <c>consumer</c>): where it is in the stream, what it delivered and awaits
/// acknowledgements for, what to redeliver, and how it delivers: to a deliver subject (push) or to the reply subjects
/// of pull requests. Split by concern: delivery (<c>.Delivery.cs</c>), acknowledgements and redelivery
/// (<c>.Acks.cs</c>), ack sampling (<c>.AckSampling.cs</c>), pull requests (<c>.Pull.cs</c>), push interest, flow
/// control and heartbeats (<c>.Push.cs</c>), replay and rate pacing (<c>.Pacing.cs</c>), information and
/// configuration updates (<c>.Info.cs</c>).
/// </summary>
/// <remarks>
/// <c>gate</c> guards the state. Everything the consumer sends goes out through one delivery runner at a time, outside
/// the lock (see <c>.Delivery.cs</c>), so control messages and deliveries keep their order and no bus call is made under
/// the lock.
/// </remarks>
internal sealed partial class Consumer
{
    private readonly MessageStream stream;
    private readonly JetStreamEngine engine;
    private readonly Lock gate = new();
    private readonly byte[] ackPrefix;
    private ConsumerConfig config;
    private byte[][] filters = [];
    private bool closed;

    // Position (nats-server sseq, dseq, adflr, asflr): the next stream and consumer sequences, and the ack floor.
    private ulong streamSequence = 1;
    private ulong deliverySequence = 1;
    private ulong ackFloorConsumer;
    private ulong ackFloorStream;

    // Deliveries awaiting acknowledgement and redelivery counts, by stream sequence.
    private readonly Dictionary<ulong, PendingDelivery> pending = [];
    private readonly Dictionary<ulong, ulong> redeliveries = [];

    // Messages to redeliver, in order (nats-server rdq/rdqi).
    private readonly List<ulong> redeliverQueue = [];
    private readonly HashSet<ulong> redeliverSet = [];

    // Cached count of matching messages not yet delivered, valid through a stream sequence (nats-server npc, npcm).
    private ulong pendingCount;
    private ulong pendingCountThrough;
    private bool pendingCountValid;

    // Last-per-subject start: the last sequence of each subject, then resume at the stream's end.
    private ulong[]? skipList;
    private int skipIndex;
    private ulong skipResume;

    private long lastDelivered;
    private long lastAcknowledged;

    private Consumer(MessageStream stream, string name, ConsumerConfig config, IConsumerStore store, long created)
    {
        this.stream = stream;
        engine = stream.Engine;
        Name = name;
        this.config = config;
        Store = store;
        Created = created;
        Client = engine.Bus.CreateClient(new BusClientOptions { Name = $"JetStream consumer {stream.Name} > {name}" });
        ackPrefix = Encoding.UTF8.GetBytes("$JS.ACK." + stream.Name + "." + name + ".");
        SetFilters(config);
        if (!config.IsPush)
        {
            waiting = new WaitQueue(config.MaxWaiting);
        }
    }

    public string Name { get; }

    public long Created { get; }

    public IConsumerStore Store { get; }

    public IBusClient Client { get; }

    public MessageStream Stream => stream;

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

    /// <summary>Creates a new consumer (validated configuration, unique name) positioned by its deliver policy.</summary>
    public static Consumer Create(MessageStream stream, string name, ConsumerConfig config)
    {
        var created = GoTime.NowNanoseconds();
        var store = stream.Store.OpenConsumerStore(StoreConfig(name, config, created));
        var consumer = new Consumer(stream, name, config, store, created);
        lock (consumer.gate)
        {
            consumer.SelectStartingSequence();
        }

        return consumer;
    }

    /// <summary>Re-opens a durable consumer from its store after a restart.</summary>
    public static Consumer Restore(MessageStream stream, IConsumerStore store, StoredConsumerMetadata metadata)
    {
        var consumer = new Consumer(stream, metadata.Name, metadata.Config, store, metadata.Created);
        lock (consumer.gate)
        {
            if (store.HasState)
            {
                consumer.ApplyStoredState(store.GetState());
            }
            else
            {
                consumer.SelectStartingSequence();
            }
        }

        return consumer;
    }

    public static ConsumerStoreConfig StoreConfig(string name, ConsumerConfig config, long created) => new()
    {
        Name = name,
        AckPolicy = config.AckPolicy,
        MaxDeliver = config.MaxDeliver,
        MemoryOnly = config.MemoryStorage,
        Durable = config.IsDurable,
        Metadata = JsonSerializer.SerializeToUtf8Bytes(new StoredConsumerMetadata { Config = config, Name = name, Created = created }, JetStreamJson.Context.StoredConsumerMetadata),
    };

    /// <summary>
    /// Subscribes to acknowledgements, pull requests and flow control, and starts the timers. Delivery starts with the
    /// first <see cref="Kick"/>, which the API sends after its reply, so the create response comes first as from nats-server.
    /// </summary>
    public void Start()
    {
        lock (gate)
        {
            subscriptions.Add(Client.Subscribe(Encoding.UTF8.GetString(ackPrefix) + ">", null, OnAck));
            subscriptions.Add(Client.Subscribe($"$JS.API.CONSUMER.MSG.NEXT.{stream.Name}.{Name}", null, OnNextRequest));
            if (config.FlowControl)
            {
                subscriptions.Add(Client.Subscribe($"$JS.FC.{stream.Name}.{Name}.*", null, OnFlowControl));
            }

            StartPush();
            StartPacing();
            ScheduleInactivityCheck();
            if (pending.Count > 0)
            {
                SchedulePendingCheck(AckWait);
            }
        }
    }

    /// <summary>Stops delivering, drops the subscriptions and timers, and keeps (or deletes) the state.</summary>
    public async Task StopAsync(bool deleteData)
    {
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            closed = true;
            foreach (var subscription in subscriptions)
            {
                subscription.Dispose();
            }

            subscriptions.Clear();
            pendingTimer?.Dispose();
            pushTimer?.Dispose();
            waitTimer?.Dispose();
            inactivityTimer?.Dispose();
            paceTimer?.Dispose();
            if (waiting is not null)
            {
                // Requests still waiting are told, as nats-server tells them "409 Consumer Deleted".
                foreach (var request in waiting.Drain())
                {
                    outbox.Enqueue(Outgoing.Status(request.Reply, "NATS/1.0 409 Consumer Deleted\r\n\r\n"u8));
                }
            }
        }

        FlushOutbox();
        if (deleteData)
        {
            await Store.DeleteAsync().ConfigureAwait(false);
        }

        await Client.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>Deletes the consumer: removed from its stream, state deleted (API delete, inactivity).</summary>
    public async Task DeleteAsync()
    {
        stream.RemoveConsumer(this);
        await StopAsync(deleteData: true).ConfigureAwait(false);
    }

    /// <summary>Whether a stored message on <paramref name="subject"/> is one this consumer delivers.</summary>
    public bool Matches(ReadOnlySpan<byte> subject)
    {
        var current = Volatile.Read(ref filters);
        if (current.Length == 0)
        {
            return true;
        }

        foreach (var filter in current)
        {
            if (Subjects.MatchesLiteral(filter, subject))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Whether a purge filter overlaps this consumer's filters (nats-server <c>isFilteredMatch</c> on the filter).</summary>
    public bool MatchesFilter(ReadOnlySpan<byte> purgeFilter)
    {
        var current = Volatile.Read(ref filters);
        if (current.Length == 0)
        {
            return true;
        }

        foreach (var filter in current)
        {
            if (Subjects.Collide(filter, purgeFilter))
            {
                return true;
            }
        }

        return false;
    }

    private void SetFilters(ConsumerConfig current)
    {
        List<byte[]> list = [];
        if (!string.IsNullOrEmpty(current.FilterSubject) && current.FilterSubject != ">")
        {
            list.Add(Encoding.UTF8.GetBytes(current.FilterSubject));
        }

        foreach (var filter in current.FilterSubjects ?? [])
        {
            if (filter == ">")
            {
                list.Clear();
                break;
            }

            list.Add(Encoding.UTF8.GetBytes(filter));
        }

        Volatile.Write(ref filters, [.. list]);
    }

    /// <summary>nats-server <c>selectStartingSeqNo</c>: where a new consumer starts, from its deliver policy. Lock held.</summary>
    private void SelectStartingSequence()
    {
        var state = stream.Store.GetState();
        ulong start;
        if (config.OptStartSeq != 0)
        {
            start = config.OptStartSeq;
        }
        else
        {
            switch (config.DeliverPolicy)
            {
                case DeliverPolicy.All:
                    start = state.FirstSequence;
                    break;
                case DeliverPolicy.Last:
                    start = state.LastSequence;
                    if (filters.Length > 0)
                    {
                        start = LastMatching();
                    }

                    break;
                case DeliverPolicy.LastPerSubject:
                    var lasts = new List<ulong>();
                    foreach (var filter in filters.Length == 0 ? [">"u8.ToArray()] : filters)
                    {
                        lasts.AddRange(stream.Store.GetSubjectsState(Encoding.UTF8.GetString(filter)).Values.Select(s => s.Last));
                    }

                    if (lasts.Count > 0)
                    {
                        lasts.Sort();
                        skipList = [.. lasts.Distinct()];
                        skipIndex = 0;
                        skipResume = state.LastSequence;
                        start = skipList[0];
                    }
                    else
                    {
                        start = state.LastSequence;
                    }

                    break;
                case DeliverPolicy.ByStartTime when config.OptStartTime is { } time:
                    start = stream.Store.GetSequenceFromTime(time);
                    break;
                default:
                    start = state.LastSequence + 1;
                    break;
            }
        }

        if (state.FirstSequence == 0)
        {
            start = 1;
        }
        else if (start < state.FirstSequence)
        {
            start = state.FirstSequence;
        }
        else if (start > state.LastSequence)
        {
            start = state.LastSequence + 1;
        }

        streamSequence = Math.Max(start, 1);
        deliverySequence = 1;
        ackFloorConsumer = 0;
        ackFloorStream = streamSequence - 1;
        Store.SetStarting(streamSequence - 1);
        pendingCountValid = false;
    }

    private ulong LastMatching()
    {
        ulong last = 0;
        foreach (var filter in filters)
        {
            last = Math.Max(last, stream.Store.GetFilteredState(1, filter).Last);
        }

        return last;
    }

    /// <summary>Resumes from a stored state (nats-server <c>applyState</c>): positions, pending, redelivery counts. Lock held.</summary>
    private void ApplyStoredState(ConsumerState state)
    {
        deliverySequence = state.Delivered.Consumer + 1;
        streamSequence = state.Delivered.Stream + 1;
        ackFloorConsumer = state.AckFloor.Consumer;
        ackFloorStream = state.AckFloor.Stream;
        foreach (var (sequence, delivery) in state.Pending)
        {
            pending[sequence] = delivery;
        }

        foreach (var (sequence, count) in state.Redelivered)
        {
            redeliveries[sequence] = count;
        }

        pendingCountValid = false;
    }
}
