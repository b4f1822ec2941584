using Broker.Abstractions;
using System.Buffers;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Events;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal;

/// <summary>
/// JetStream in one account (nats-server's <c>jsAccount</c>): the account's streams, its usage and reservations
/// against its own limits (<see cref="AccountJetStreamLimits"/>) beside the server's, its API client bound to the
/// account and subscribed there to <c>$JS.API.&gt;</c>, and its store folder
/// <c>&lt;store_dir&gt;/jetstream/&lt;account&gt;/streams</c>. Streams and consumers open their bus clients in the
/// account. Requests go through the engine's one API queue and are answered here.
/// </summary>
internal sealed partial class JetStreamAccount : IAsyncDisposable
{
    private readonly Lock streamsGate = new();
    private readonly Dictionary<string, MessageStream> streams = new(StringComparer.Ordinal);
    private readonly ISubjectInterest? globalInterest;
    private volatile AccountJetStreamLimits limits;
    private IBusClient? apiClient;
    private IBusSubscription? apiSubscription;
    private SubjectForwarder[]? domainForwarders;
    private readonly AccountInterest interest;

    // Bytes held by the account's streams on memory and disk stores; reserved by streams with max_bytes.
    private long memoryUsed;
    private long storageUsed;
    private long memoryReserved;
    private long storageReserved;

    public JetStreamAccount(JetStreamEngine engine, string name, AccountJetStreamLimits limits)
    {
        Engine = engine;
        Name = name;
        this.limits = limits;

        // $G keeps the broker's own interest check (exactly as before accounts); another account asks its API client.
        globalInterest = name == BrokerAccount.GlobalName ? engine.Interest : null;
        interest = new AccountInterest(this);
        Advisories = new JetStreamAdvisories(name, Interest, engine.Options.Domain, engine.Identity, PublishAdvisory);
        Api = new JetStreamApi(this);
    }

    public JetStreamEngine Engine { get; }

    /// <summary>The account's name (<c>$G</c> for the global account).</summary>
    public string Name { get; }

    /// <summary>Whether this is the global account <c>$G</c> (JetStream with the server's limits only).</summary>
    public bool IsGlobal => Name == BrokerAccount.GlobalName;

    /// <summary>The account bus clients of this account name: null for <c>$G</c> (the default), as before accounts.</summary>
    public string? BusAccount => Name == BrokerAccount.GlobalName ? null : Name;

    /// <summary>The account's limits; a reload replaces them.</summary>
    public AccountJetStreamLimits Limits
    {
        get => limits;
        set => limits = value;
    }

    public JetStreamOptions Options => Engine.Options;

    public IMessageBus Bus => Engine.Bus;

    public Microsoft.Extensions.Logging.ILogger Logger => Engine.Logger;

    /// <summary>Whether a subject has subscribers in this account.</summary>
    public ISubjectInterest? Interest => globalInterest ?? interest;

    public JetStreamApi Api { get; }

    /// <summary>The account's stream, consumer and API audit advisories.</summary>
    public JetStreamAdvisories Advisories { get; }

    /// <summary>The streams folder of the account, <c>&lt;store_dir&gt;/jetstream/&lt;account&gt;/streams</c>.</summary>
    public string StreamsDirectory => Path.Combine(Options.EffectiveStoreDirectory, "jetstream", Name, "streams");

    public IReadOnlyCollection<string> StorageTypes => Engine.StorageTypes;

    public long MemoryUsed => Interlocked.Read(ref memoryUsed);

    public long StorageUsed => Interlocked.Read(ref storageUsed);

    public long MemoryReserved => Interlocked.Read(ref memoryReserved);

    public long StorageReserved => Interlocked.Read(ref storageReserved);

    /// <summary>Recovers the account's streams, then opens its API client and subscribes it to <c>$JS.API.&gt;</c>.</summary>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        apiClient = Bus.CreateClient(new BusClientOptions { Name = "JetStream API", Account = BusAccount });
        await RecoverAsync(cancellationToken).ConfigureAwait(false);
        apiSubscription = apiClient.Subscribe(ApiSubjects.All, null, OnApiMessage);
        if (Options.Domain is { } served)
        {
            // nats-server maps the domain's API onto the account's own, so requests naming the domain are answered here.
            domainForwarders = SubjectForwarder.ForDomain(served, apiClient, Interest);
        }
    }

    /// <summary>Whether a reload took JetStream from the account: requests still queued for it are dropped.</summary>
    public bool Stopped { get; private set; }

    /// <summary>A reload takes JetStream from the account: it stops listening, and what is queued for it is dropped.</summary>
    public void Retire()
    {
        Stopped = true;
        StopListening();
    }

    /// <summary>Stops listening for requests (the engine's queue may still hold some; they are answered).</summary>
    public void StopListening()
    {
        Interlocked.Exchange(ref apiSubscription, null)?.Dispose();
        foreach (var forwarder in Interlocked.Exchange(ref domainForwarders, null) ?? [])
        {
            forwarder.Dispose();
        }
    }

    /// <summary>Stops every stream (keeping their data) and closes the API client.</summary>
    public async Task StopAsync()
    {
        StopListening();
        List<MessageStream> all;
        lock (streamsGate)
        {
            all = [.. streams.Values];
            streams.Clear();
        }

        foreach (var stream in all)
        {
            try
            {
                await stream.StopAsync(deleteData: false).ConfigureAwait(false);
            }
#pragma warning disable CA1031 // Stop the other streams whatever one of them throws.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                JetStreamLog.StopFailed(Logger, stream.Name, ex);
            }
        }

        // The client stays assigned (a late reply finds it disposed rather than null); disposing twice is harmless.
        if (apiClient is not null)
        {
            await apiClient.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>The same as <see cref="StopAsync"/>.</summary>
    public ValueTask DisposeAsync() => new(StopAsync());

    public IStreamStoreProvider? FindProvider(string storageType) => Engine.FindProvider(storageType);

    public MessageStream? FindStream(string name)
    {
        lock (streamsGate)
        {
            return streams.GetValueOrDefault(name);
        }
    }

    /// <summary>The configuration of a stream of the account, null when it has none (the checks of mirrors and sources).</summary>
    public StreamConfig? FindStreamConfig(string name) => FindStream(name)?.Config;

    /// <summary>Every stream, ordered by name.</summary>
    public List<MessageStream> StreamsByName()
    {
        lock (streamsGate)
        {
            return [.. streams.Values.OrderBy(s => s.Name, StringComparer.Ordinal)];
        }
    }

    public int StreamCount
    {
        get
        {
            lock (streamsGate)
            {
                return streams.Count;
            }
        }
    }

    public void AddStream(MessageStream stream)
    {
        lock (streamsGate)
        {
            streams.Add(stream.Name, stream);
        }

        Reserve(stream.Medium, stream.Config.MaxBytes, 1);
    }

    public void RemoveStream(MessageStream stream)
    {
        lock (streamsGate)
        {
            streams.Remove(stream.Name);
        }

        Reserve(stream.Medium, stream.Config.MaxBytes, -1);
    }

    /// <summary>Whether another stream's subjects overlap <paramref name="subjects"/> (nats-server <c>subjectsOverlap</c>).</summary>
    public bool SubjectsOverlap(IEnumerable<string> subjects, MessageStream? self)
    {
        var wanted = subjects.Select(System.Text.Encoding.UTF8.GetBytes).ToList();
        lock (streamsGate)
        {
            foreach (var stream in streams.Values)
            {
                if (ReferenceEquals(stream, self))
                {
                    continue;
                }

                foreach (var subject in stream.Config.Subjects ?? [])
                {
                    var existing = System.Text.Encoding.UTF8.GetBytes(subject);
                    if (wanted.Any(w => Subjects.Collide(w, existing)))
                    {
                        return true;
                    }
                }
            }
        }

        return false;
    }

    /// <summary>Adds a change in stored bytes to the usage of a medium, the account's and the server's.</summary>
    public void AddUsage(StorageMedium medium, long bytes)
    {
        Interlocked.Add(ref medium == StorageMedium.Memory ? ref memoryUsed : ref storageUsed, bytes);
        Engine.AddUsage(medium, bytes);
    }

    /// <summary>
    /// Whether the account is over its limit of a medium once a message is stored (nats-server <c>jsAccount.limitsExceeded</c>:
    /// its <c>max_memory</c>/<c>max_store</c>, and as 2.9.10 its per-stream byte limit compared with the account's total).
    /// </summary>
    public bool LimitsExceeded(StorageMedium medium)
    {
        var current = limits;
        if (medium == StorageMedium.Memory)
        {
            var used = MemoryUsed;
            return (current.MemoryMaxStreamBytes > 0 && used > current.MemoryMaxStreamBytes) || (current.MaxMemory >= 0 && used > current.MaxMemory);
        }

        var stored = StorageUsed;
        return (current.StorageMaxStreamBytes > 0 && stored > current.StorageMaxStreamBytes) || (current.MaxStorage >= 0 && stored > current.MaxStorage);
    }

    /// <summary>
    /// Whether a stream with <paramref name="maxBytes"/> fits the server's limit of the medium beside the server's
    /// reservations (nats-server <c>checkBytesLimits</c>, server part).
    /// </summary>
    public bool FitsReservation(StorageMedium medium, long maxBytes, long alreadyReserved = 0) => Engine.FitsReservation(medium, maxBytes, alreadyReserved);

    /// <summary>Adds (<paramref name="sign"/> 1) or releases (-1) a stream's <c>max_bytes</c> reservation, the account's and the server's.</summary>
    public void Reserve(StorageMedium medium, long maxBytes, int sign)
    {
        if (maxBytes <= 0)
        {
            return;
        }

        Interlocked.Add(ref medium == StorageMedium.Memory ? ref memoryReserved : ref storageReserved, sign * maxBytes);
        Engine.Reserve(medium, maxBytes, sign);
    }

    /// <summary>Sends an API reply through the account's API client.</summary>
    public void Reply(string? reply, byte[] body)
    {
        if (!string.IsNullOrEmpty(reply) && apiClient is { } client)
        {
            client.Publish(reply, body);
        }
    }

    /// <summary>Publishes an advisory in the account through its API client (none before it is open or once it is closed).</summary>
    private void PublishAdvisory(byte[] subject, byte[] body)
    {
        try
        {
            apiClient?.Publish(subject, ReadOnlySpan<byte>.Empty, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(body));
        }
        catch (ObjectDisposedException)
        {
            // A consumer's inactivity deletion racing the account's stop: nobody is left to tell.
        }
    }

    /// <summary>Interest in the account, asked of the account's API client (none before it is open).</summary>
    private sealed class AccountInterest(JetStreamAccount account) : ISubjectInterest
    {
        public bool HasInterest(ReadOnlySpan<byte> subject) => account.apiClient?.HasInterest(subject) ?? false;
    }
}
