using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// One stream (nats-server's <c>stream</c>): its configuration, its store, the bus subscriptions that take in
/// published messages, its lifecycle (create, restore, update, purge, stop) and its state as the API reports it. It
/// owns and wires the collaborators: <see cref="MessageIngest"/> (the publish path's checks and the append, with the
/// <see cref="DuplicateWindow"/>), <see cref="PubAckSender"/> (acks, held until durable), <see cref="ConsumerRegistry"/>
/// (the consumers and the retention they drive) and <see cref="DirectGet"/> (get requests).
/// </summary>
/// <remarks>
/// Lock order: <c>gate</c> (appends, configuration, subscriptions) before a consumer's lock before the store's own.
/// Appends are serialised under <c>gate</c>, as the storage contract expects, so the ingest's state needs no lock of
/// its own; nothing that publishes to the bus runs under it.
/// </remarks>
internal sealed partial class MessageStream
{
    [ThreadStatic]
    private static byte[]? headerScratch;

    private readonly JetStreamAccount account;
    private readonly Lock gate = new();
    private readonly List<IBusSubscription> subscriptions = [];
    private readonly ConsumerRegistry consumers;
    private ConsumerInbox? consumerInbox;
    private object? consumerInboxGate;
    private readonly MessageIngest ingest;
    private readonly PubAckSender acks;
    private readonly DirectGet directGet;
    private readonly RePublisher? rePublisher;
    private StreamConfig config;

    // The subject_transform in force, replaced with the configuration under gate; null without one.
    private StreamSubjectTransform? ingestTransform;
    private bool stopped;

    private MessageStream(JetStreamAccount account, IStreamStoreProvider provider, IStreamStore store, StreamConfig config, long created, bool newStream)
    {
        this.account = account;
        Provider = provider;
        Store = store;
        this.config = config;
        Name = config.Name;
        Created = created;
        NameBytes = Encoding.UTF8.GetBytes(config.Name);
        Client = account.Bus.CreateClient(new BusClientOptions { Name = "JetStream stream " + config.Name, Account = account.BusAccount });
        var medium = provider.Medium;
        consumers = new ConsumerRegistry(store);
        ingest = new MessageIngest(
            store,
            Name,
            NameBytes,
            consumers,
            () => account.Engine.LimitsExceeded(medium),
            account.Logger,
            newStream,
            account.IsGlobal ? null : () => account.LimitsExceeded(medium),
            keepsTimestamps: provider.Features.HasFlag(StoreFeatures.Timestamps));
        acks = new PubAckSender(store, Client, Name, account.Options.Domain, account.Logger);
        directGet = new DirectGet(store, Client, NameBytes);
        rePublisher = RePublisher.For(config, NameBytes);
        ingestTransform = StreamTransformValidation.IngestTransform(config);
    }

    public string Name { get; }

    public byte[] NameBytes { get; }

    public long Created { get; }

    public IStreamStoreProvider Provider { get; }

    public StorageMedium Medium => Provider.Medium;

    public IStreamStore Store { get; }

    public IBusClient Client { get; }

    public JetStreamAccount Account => account;

    /// <summary>
    /// The configuration in force. Read without the stream's lock: consumers read it while holding their own lock, and
    /// the publish path holds the stream's lock while it notifies consumers (which takes theirs), so taking the
    /// stream's lock here would order the two locks both ways (docs/locks.md). An update replaces the whole object.
    /// </summary>
    public StreamConfig Config => Volatile.Read(ref config);

    /// <summary>Creates a stream whose configuration was validated, with a new store.</summary>
    public static async Task<MessageStream> CreateAsync(JetStreamAccount account, IStreamStoreProvider provider, StreamConfig config)
    {
        var created = GoTime.NowNanoseconds();
        var store = await provider.CreateAsync(StoreConfig(account, config, created)).ConfigureAwait(false);
        if (config.FirstSeq > 1)
        {
            // 2.10's first_seq: the empty store moves on so the first message gets it (nats-server purges the new
            // store up to it); kept durable like any other purge.
            store.Compact(config.FirstSeq);
            await store.FlushAsync().ConfigureAwait(false);
        }

        var stream = new MessageStream(account, provider, store, config, created, newStream: true);
        stream.Start();
        return stream;
    }

    /// <summary>Re-opens a stream a durable store kept, with its consumers.</summary>
    public static async Task<MessageStream> RestoreAsync(JetStreamAccount account, IStreamStoreProvider provider, IStreamStore store, StoredStreamMetadata metadata)
    {
        var stream = new MessageStream(account, provider, store, metadata.Config, metadata.Created, newStream: false);
        stream.account.AddUsage(stream.Medium, (long)store.GetState().Bytes);
        foreach (var consumerStore in store.ConsumerStores)
        {
            var consumerMetadata = JsonSerializer.Deserialize(consumerStore.Config.Metadata.Span, JetStreamJson.Context.StoredConsumerMetadata);
            if (consumerMetadata is null)
            {
                continue;
            }

            if (!consumerMetadata.Config.IsDurable)
            {
                // As nats-server: an ephemeral consumer does not survive a restart.
                await consumerStore.DeleteAsync().ConfigureAwait(false);
                continue;
            }

            stream.AddConsumer(Consumer.Restore(stream, consumerStore, consumerMetadata));
        }

        // The duplicate window is refilled from the store when the first message needs it (DuplicateWindow.EnsureLoaded).
        stream.Start();
        return stream;
    }

    /// <summary>The store configuration for a stream configuration (limits, location, the metadata to keep).</summary>
    public static StreamStoreConfig StoreConfig(JetStreamAccount account, StreamConfig config, long created) => new()
    {
        Name = config.Name,
        Account = account.Name,
        StorageType = config.Storage,
        Directory = Path.Combine(account.StreamsDirectory, config.Name),
        Subjects = config.Subjects ?? [],
        Retention = config.Retention,
        MaxMessages = config.MaxMsgs,
        MaxBytes = config.MaxBytes,
        MaxAge = TimeSpan.FromTicks(config.MaxAge / 100),
        MaxMessagesPerSubject = config.MaxMsgsPerSubject,
        Discard = config.Discard,
        DiscardNewPerSubject = config.DiscardNewPerSubject,
        Compression = config.Compression == "s2" ? StreamCompression.S2 : StreamCompression.None,
        Metadata = StreamInfoJson.Write(new StoredStreamMetadata { Config = config, Created = created }),
    };

    public ConsumerSnapshot ConsumersSnapshot => consumers.Snapshot;

    /// <summary>The bus side its consumers share (their client, ack and pull-request subscriptions), made with the first.</summary>
    public ConsumerInbox ConsumerInbox => Volatile.Read(ref consumerInbox) ?? MakeConsumerInbox();

    // Apart from the getter: its lambda captures this, a delegate made with every read (each delivery batch reads it).
    private ConsumerInbox MakeConsumerInbox() =>
        LazyInitializer.EnsureInitialized(ref consumerInbox, ref consumerInboxGate, () => new ConsumerInbox(account.Bus, account.BusAccount, Name, consumers));

    public int ConsumerCount => consumers.Count;

    public Consumer? FindConsumer(string name) => consumers.Find(name);

    /// <summary>Every consumer, ordered by name.</summary>
    public List<Consumer> ConsumersByName() => consumers.ByName();

    public void AddConsumer(Consumer consumer) => consumers.Add(consumer);

    public void RemoveConsumer(Consumer consumer) => consumers.Remove(consumer);

    /// <summary>A consumer acknowledged <paramref name="sequence"/>; the stream's retention may remove the message.</summary>
    public void OnAcknowledged(Consumer by, ulong sequence) => consumers.OnAcknowledged(by, sequence, Config.Retention);

    /// <summary>Loads what a get request asks for: by sequence, the next for a subject from a sequence, or the last for a subject.</summary>
    public LoadStatus Get(MessageGetRequest request, StoredMessage into) => directGet.Get(request, into);

    /// <summary>Subscribes to the stream's subjects and direct gets, and listens to the store's changes.</summary>
    private void Start()
    {
        Store.RegisterStorageUpdates(OnStorageUpdate);
        UpdateMarkers(config);
        Subscribe(config);
        StartSources(config);
        foreach (var consumer in ConsumersSnapshot)
        {
            consumer.Start();
            consumer.Kick();
        }
    }

    private void Subscribe(StreamConfig current)
    {
        foreach (var subject in current.Subjects ?? [])
        {
            subscriptions.Add(Client.Subscribe(subject, null, OnInbound));
        }

        if (current.AllowDirect)
        {
            // nats-server's direct-get subscriptions are in the "_sys_" queue group, so replicas share requests.
            subscriptions.Add(Client.Subscribe("$JS.API.DIRECT.GET." + Name, "_sys_", directGet.OnRequest));
            subscriptions.Add(Client.Subscribe("$JS.API.DIRECT.GET." + Name + ".>", "_sys_", directGet.OnLastBySubject));
        }
    }

    private void Unsubscribe()
    {
        foreach (var subscription in subscriptions)
        {
            subscription.Dispose();
        }

        subscriptions.Clear();
    }

    /// <summary>The state as the API reports it, with deleted sequences and subject counts when asked.</summary>
    public StreamStateModel State(bool deletedDetails = false)
    {
        var state = Store.GetState();
        return new StreamStateModel
        {
            Messages = state.Messages,
            Bytes = state.Bytes,
            FirstSeq = state.FirstSequence,
            FirstTime = state.FirstTimestamp,
            LastSeq = state.LastSequence,
            LastTime = state.LastTimestamp,
            NumSubjects = state.SubjectCount,
            NumDeleted = state.DeletedCount,
            Deleted = deletedDetails && state.DeletedCount > 0 ? [.. Store.GetDeletedSequences()] : null,
            Consumers = ConsumerCount,
        };
    }

    /// <param name="deletedDetails">Whether to list the deleted sequences.</param>
    /// <param name="withSources">Whether to report the mirror's and sources' state (nats-server's create response does not).</param>
    public StreamInfoModel Info(bool deletedDetails = false, bool withSources = true) => new()
    {
        Config = Config.Clone(),
        Created = Created,
        State = State(deletedDetails),
        Domain = account.Options.Domain,
        Mirror = withSources ? sources?.MirrorInfo() : null,
        Sources = withSources ? sources?.SourcesInfo() : null,
    };

    /// <summary>Stops taking messages, stops the consumers and closes (or deletes) the store.</summary>
    public async Task StopAsync(bool deleteData)
    {
        lock (gate)
        {
            if (stopped)
            {
                return;
            }

            stopped = true;
            Unsubscribe();
        }

        if (sources is not null)
        {
            await sources.DisposeAsync().ConfigureAwait(false);
        }

        foreach (var consumer in ConsumersSnapshot)
        {
            await consumer.StopAsync(deleteData).ConfigureAwait(false);
        }

        var bytes = (long)Store.GetState().Bytes;
        Store.RegisterStorageUpdates(null);
        Store.RegisterSubjectExpiries(null);
        account.AddUsage(Medium, -bytes);
        if (deleteData)
        {
            await Store.DeleteAsync().ConfigureAwait(false);
        }
        else
        {
            await Store.DisposeAsync().ConfigureAwait(false);
        }

        if (consumerInbox is not null)
        {
            await consumerInbox.DisposeAsync().ConfigureAwait(false);
        }

        await Client.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// A message on one of the stream's subjects (nats-server <c>processJetStreamMsg</c>): its subject transformed
    /// (<c>subject_transform</c>), checked and appended under <c>gate</c>, then the rollup it asked for, its republish,
    /// then its ack. Runs on the stream client's handler, one message at a time, and allocates nothing for a plain
    /// publish.
    /// </summary>
    private void OnInbound(in BusMessage message)
    {
        // A stream with republish holds RePublisher.Sync from prepare to publish: its sources' deliveries and its
        // markers, on other threads, use the republisher's buffers too.
        var republishing = rePublisher?.Sync;
        republishing?.Enter();
        try
        {
            var headers = message.Headers.IsEmpty ? default : NatsHeaders.Contiguous(message.Headers, ref headerScratch);
            var subject = message.Subject;
            ReadOnlySpan<byte> republishTo = default;
            var republish = false;
            IngestOutcome outcome;
            lock (gate)
            {
                if (stopped)
                {
                    outcome = default;
                }
                else
                {
                    if (ingestTransform is not null && ingestTransform.TryApply(subject, out var transformed))
                    {
                        subject = transformed;
                    }

                    republish = rePublisher is not null && rePublisher.Prepare(Store, subject, out republishTo);
                    outcome = ingest.Append(config, subject, headers, message.Headers, message.Payload, !message.ReplyTo.IsEmpty);
                }
            }

            ApplyRollup(outcome, subject);
            if (republish && outcome.Stored)
            {
                rePublisher!.Publish(Client, republishTo, subject, outcome.Sequence, headers, message.Payload);
            }

            if (outcome.Respond)
            {
                acks.Respond(message.ReplyTo, outcome);
            }
        }
        finally
        {
            republishing?.Exit();
        }
    }

    /// <summary>Nats-Rollup: keeps only the new message, of its subject ("sub") or of the stream ("all").</summary>
    private void ApplyRollup(IngestOutcome outcome, ReadOnlySpan<byte> subject)
    {
        if (outcome.Rollup != 0)
        {
            Purge(outcome.Rollup == 1 ? Encoding.UTF8.GetString(subject) : "", 0, 1);
        }
    }

    /// <summary>Applies a validated configuration: store limits, reservations, subscriptions, sources.</summary>
    public void Update(StreamConfig updated)
    {
        UpdateSubscriptions(updated);
        UpdateSources(updated);
    }

    private void UpdateSubscriptions(StreamConfig updated)
    {
        lock (gate)
        {
            var resubscribe = !SameSubjects(config, updated) || config.AllowDirect != updated.AllowDirect;
            account.Reserve(Medium, config.MaxBytes, -1);
            account.Reserve(Medium, updated.MaxBytes, 1);
            Volatile.Write(ref config, updated);
            ingestTransform = StreamTransformValidation.IngestTransform(updated);
            Store.UpdateConfig(StoreConfig(account, updated, Created));
            UpdateMarkers(updated);
            if (resubscribe && !stopped)
            {
                Unsubscribe();
                Subscribe(updated);
            }
        }
    }

    private static bool SameSubjects(StreamConfig a, StreamConfig b) =>
        (a.Subjects ?? []).SequenceEqual(b.Subjects ?? [], StringComparer.Ordinal);

    /// <summary>Purges (nats-server <c>mset.purge</c>) and moves consumers past what was purged.</summary>
    public ulong Purge(string subject, ulong sequence, ulong keep)
    {
        var purged = subject.Length == 0 && sequence == 0 && keep == 0 ? Store.Purge() : Store.Purge(subject, sequence, keep);
        var state = Store.GetState();
        var first = state.FirstSequence;
        var filter = Encoding.UTF8.GetBytes(subject);
        if (subject.Length > 0)
        {
            var filtered = Store.GetFilteredState(state.FirstSequence, filter);
            first = filtered.Messages > 0 ? filtered.First : state.LastSequence + 1;
        }

        consumers.OnPurged(filter, first, state.LastSequence);
        return purged;
    }

    /// <summary>Removes one message, erasing its bytes unless <paramref name="noErase"/>.</summary>
    public bool DeleteMessage(ulong sequence, bool noErase) => Store.Remove(sequence, secureErase: !noErase);

    /// <summary>Usage accounting, and consumers told about messages the store removed (nats-server <c>storeUpdates</c>).</summary>
    private void OnStorageUpdate(long messages, long bytes, ulong sequence, ReadOnlySpan<byte> subject)
    {
        account.AddUsage(Medium, bytes);
        if (messages < 0)
        {
            consumers.OnRemoved(sequence, subject, messages);
        }
    }
}
