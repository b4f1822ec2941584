using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// One stream (nats-server's <c>stream</c>): its configuration, its store, the bus subscriptions that take in
/// published messages, and its consumers. Split by concern: ingest (<c>.Ingest.cs</c>), deduplication
/// (<c>.Dedupe.cs</c>), direct get (<c>.Direct.cs</c>), consumers and retention (<c>.Consumers.cs</c>), configuration
/// changes and purges (<c>.Update.cs</c>).
/// </summary>
/// <remarks>
/// Lock order: <c>gate</c> (appends, configuration) before a consumer's lock before the store's own. Appends are
/// serialised under <c>gate</c>, as the storage contract expects; nothing that publishes to the bus runs under it.
/// </remarks>
internal sealed partial class MessageStream
{
    private readonly JetStreamEngine engine;
    private readonly Lock gate = new();
    private readonly List<IBusSubscription> subscriptions = [];
    private StreamConfig config;
    private byte[] pubAckPrefix = [];
    private bool stopped;

    private MessageStream(JetStreamEngine engine, IStreamStoreProvider provider, IStreamStore store, StreamConfig config, long created)
    {
        this.engine = engine;
        Provider = provider;
        Store = store;
        this.config = config;
        Name = config.Name;
        Created = created;
        NameBytes = Encoding.UTF8.GetBytes(config.Name);
        Client = engine.Bus.CreateClient(new BusClientOptions { Name = "JetStream stream " + config.Name });
        BuildPubAckPrefix();
        lastSequence = store.GetState().LastSequence;
    }

    public string Name { get; }

    public byte[] NameBytes { get; }

    public long Created { get; }

    public IStreamStoreProvider Provider { get; }

    public StorageMedium Medium => Provider.Medium;

    public IStreamStore Store { get; }

    public IBusClient Client { get; }

    public JetStreamEngine Engine => engine;

    /// <summary>
    /// The configuration in force. Read without the stream's lock: consumers read it while holding their own lock, and
    /// the publish path holds the stream's lock while it notifies consumers (which takes theirs), so taking the
    /// stream's lock here would order the two locks both ways (docs/locks.md). An update replaces the whole object.
    /// </summary>
    public StreamConfig Config => Volatile.Read(ref config);

    /// <summary>Creates a stream whose configuration was validated, with a new store.</summary>
    public static async Task<MessageStream> CreateAsync(JetStreamEngine engine, IStreamStoreProvider provider, StreamConfig config)
    {
        var created = GoTime.NowNanoseconds();
        var store = await provider.CreateAsync(StoreConfig(engine, config, created)).ConfigureAwait(false);
        if (config.FirstSeq > 1)
        {
            // 2.10's first_seq: the empty store moves on so the first message gets it (nats-server purges the new
            // store up to it); kept durable like any other purge.
            store.Compact(config.FirstSeq);
            await store.FlushAsync().ConfigureAwait(false);
        }

        var stream = new MessageStream(engine, provider, store, config, created) { messageIdsLoaded = true };
        stream.Start();
        return stream;
    }

    /// <summary>Re-opens a stream a durable store kept, with its consumers.</summary>
    public static async Task<MessageStream> RestoreAsync(JetStreamEngine engine, IStreamStoreProvider provider, IStreamStore store, StoredStreamMetadata metadata)
    {
        var stream = new MessageStream(engine, provider, store, metadata.Config, metadata.Created);
        stream.engine.AddUsage(stream.Medium, (long)store.GetState().Bytes);
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

        // The duplicate window is refilled from the store when the first message needs it (MessageStream.Dedupe.cs).
        stream.Start();
        return stream;
    }

    /// <summary>The store configuration for a stream configuration (limits, location, the metadata to keep).</summary>
    public static StreamStoreConfig StoreConfig(JetStreamEngine engine, StreamConfig config, long created) => new()
    {
        Name = config.Name,
        Account = JetStreamEngine.Account,
        StorageType = config.Storage,
        Directory = Path.Combine(engine.StreamsDirectory, config.Name),
        Subjects = config.Subjects ?? [],
        Retention = config.Retention,
        MaxMessages = config.MaxMsgs,
        MaxBytes = config.MaxBytes,
        MaxAge = TimeSpan.FromTicks(config.MaxAge / 100),
        MaxMessagesPerSubject = config.MaxMsgsPerSubject,
        Discard = config.Discard,
        DiscardNewPerSubject = config.DiscardNewPerSubject,
        Compression = config.Compression == "s2" ? StreamCompression.S2 : StreamCompression.None,
        Metadata = JsonSerializer.SerializeToUtf8Bytes(new StoredStreamMetadata { Config = config, Created = created }, JetStreamJson.Context.StoredStreamMetadata),
    };

    /// <summary>Subscribes to the stream's subjects and direct gets, and listens to the store's changes.</summary>
    private void Start()
    {
        Store.RegisterStorageUpdates(OnStorageUpdate);
        Subscribe(config);
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
            subscriptions.Add(Client.Subscribe("$JS.API.DIRECT.GET." + Name, "_sys_", OnDirectGet));
            subscriptions.Add(Client.Subscribe("$JS.API.DIRECT.GET." + Name + ".>", "_sys_", OnDirectGetLastBySubject));
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

    public StreamInfoModel Info(bool deletedDetails = false) => new()
    {
        Config = Config.Clone(),
        Created = Created,
        State = State(deletedDetails),
        Domain = engine.Options.Domain,
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

        foreach (var consumer in ConsumersSnapshot)
        {
            await consumer.StopAsync(deleteData).ConfigureAwait(false);
        }

        var bytes = (long)Store.GetState().Bytes;
        Store.RegisterStorageUpdates(null);
        engine.AddUsage(Medium, -bytes);
        if (deleteData)
        {
            await Store.DeleteAsync().ConfigureAwait(false);
        }
        else
        {
            await Store.DisposeAsync().ConfigureAwait(false);
        }

        await Client.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>Usage accounting, and consumers told about messages the store removed (nats-server <c>storeUpdates</c>).</summary>
    private void OnStorageUpdate(long messages, long bytes, ulong sequence, ReadOnlySpan<byte> subject)
    {
        engine.AddUsage(Medium, bytes);
        if (messages < 0)
        {
            foreach (var consumer in ConsumersSnapshot)
            {
                consumer.OnMessageRemoved(sequence, subject, messages);
            }
        }
    }

    private void BuildPubAckPrefix()
    {
        var domain = engine.Options.Domain;
        var text = string.IsNullOrEmpty(domain)
            ? "{\"stream\":" + JsonSerializer.Serialize(Name, JetStreamJson.Context.String) + ",\"seq\":"
            : "{\"stream\":" + JsonSerializer.Serialize(Name, JetStreamJson.Context.String) + ",\"domain\":" + JsonSerializer.Serialize(domain, JetStreamJson.Context.String) + ",\"seq\":";
        pubAckPrefix = Encoding.UTF8.GetBytes(text);
    }
}
