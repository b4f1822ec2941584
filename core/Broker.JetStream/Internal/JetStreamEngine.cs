using System.Globalization;
using System.Threading.Channels;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Streams;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Internal;

/// <summary>
/// JetStream for the broker's one account (<c>$G</c>): the stream registry, usage against the configured limits, the
/// API service on <c>$JS.API.&gt;</c>, and start-up recovery. It reaches the broker only through bus clients and keeps
/// messages only through <see cref="IStreamStoreProvider"/>s. API requests are answered one at a time on a queue of
/// their own (nats-server's API queue), so a request never blocks the publisher's thread.
/// </summary>
internal sealed partial class JetStreamEngine : IHostedService, IAsyncDisposable
{
    public const string Account = "$G";

    private readonly Dictionary<string, IStreamStoreProvider> providers = new(StringComparer.Ordinal);
    private readonly Lock streamsGate = new();
    private readonly Dictionary<string, MessageStream> streams = new(StringComparer.Ordinal);
    private readonly Channel<ApiRequest> apiQueue = Channel.CreateUnbounded<ApiRequest>(new UnboundedChannelOptions { SingleReader = true });
    private readonly CancellationTokenSource stopping = new();
    private IBusClient? apiClient;
    private IBusSubscription? apiSubscription;
    private SubjectForwarder? domainForwarder;
    private Task? apiLoop;

    // Bytes held by streams on memory and disk stores; reserved by streams with max_bytes (nats-server's accounting).
    private long memoryUsed;
    private long storageUsed;
    private long memoryReserved;
    private long storageReserved;

    public JetStreamEngine(JetStreamOptions options, IMessageBus bus, IEnumerable<IStreamStoreProvider> storeProviders, ISubjectInterest? interest, ILoggerFactory loggerFactory)
    {
        Options = options;
        Bus = bus;
        Interest = interest;
        LoggerFactory = loggerFactory;
        Logger = loggerFactory.CreateLogger("Broker.JetStream");
        foreach (var provider in storeProviders)
        {
            providers.TryAdd(provider.StorageType, provider);
        }

        Api = new JetStreamApi(this);
    }

    public JetStreamOptions Options { get; }

    public IMessageBus Bus { get; }

    public ISubjectInterest? Interest { get; }

    public ILoggerFactory LoggerFactory { get; }

    public ILogger Logger { get; }

    public JetStreamApi Api { get; }

    public long StartedAt { get; private set; }

    /// <summary>The streams folder of the account, <c>&lt;store_dir&gt;/jetstream/$G/streams</c>.</summary>
    public string StreamsDirectory => Path.Combine(Options.EffectiveStoreDirectory, "jetstream", Account, "streams");

    public IReadOnlyCollection<string> StorageTypes => providers.Keys;

    public long MemoryUsed => Interlocked.Read(ref memoryUsed);

    public long StorageUsed => Interlocked.Read(ref storageUsed);

    public long MemoryReserved => Interlocked.Read(ref memoryReserved);

    public long StorageReserved => Interlocked.Read(ref storageReserved);

    /// <summary>API responses sent (counted by the API's responder).</summary>
    public long ApiTotal => Api.Total;

    /// <summary>API responses sent with an error.</summary>
    public long ApiErrors => Api.Errors;

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        StartedAt = Json.GoTime.NowNanoseconds();
        JetStreamLog.Starting(Logger);
        JetStreamLog.MaxMemory(Logger, FormatBytes(Options.EffectiveMaxMemoryStore));
        JetStreamLog.MaxStorage(Logger, FormatBytes(Options.EffectiveMaxFileStore));
        JetStreamLog.StoreDirectory(Logger, Path.Combine(Options.EffectiveStoreDirectory, "jetstream"));
        if (providers.Count == 0)
        {
            JetStreamLog.NoStores(Logger);
        }
        else
        {
            JetStreamLog.StoreTypes(Logger, string.Join(", ", providers.Keys.Order(StringComparer.Ordinal)));
        }

        if (Options.Domain is { } domain)
        {
            JetStreamLog.Domain(Logger, domain);
        }

        if (Options.IgnoredSettings.Count > 0)
        {
            JetStreamLog.IgnoredSettings(Logger, string.Join(", ", Options.IgnoredSettings));
        }

        foreach (var (account, defaultDomain) in Options.DefaultDomains)
        {
            JetStreamLog.SkippingDefaultDomain(Logger, defaultDomain, account);
        }

        await RecoverAsync(cancellationToken).ConfigureAwait(false);
        apiClient = Bus.CreateClient(new BusClientOptions { Name = "JetStream API" });
        apiLoop = Task.Run(ProcessApiAsync, CancellationToken.None);
        apiSubscription = apiClient.Subscribe(ApiSubjects.All, null, OnApiMessage);
        if (Options.Domain is { } served)
        {
            // nats-server maps the domain's API onto the account's own, so requests naming the domain are answered here.
            domainForwarder = new SubjectForwarder("$JS." + served + ".API.", ApiSubjects.Prefix, apiClient, Interest);
        }
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        apiSubscription?.Dispose();
        domainForwarder?.Dispose();
        apiQueue.Writer.TryComplete();
        await stopping.CancelAsync().ConfigureAwait(false);
        if (apiLoop is not null)
        {
            await apiLoop.ConfigureAwait(false);
        }

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

        if (apiClient is not null)
        {
            await apiClient.DisposeAsync().ConfigureAwait(false);
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (!stopping.IsCancellationRequested)
        {
            await StopAsync(CancellationToken.None).ConfigureAwait(false);
        }

        stopping.Dispose();
    }

    public IStreamStoreProvider? FindProvider(string storageType) => providers.GetValueOrDefault(storageType);

    public MessageStream? FindStream(string name)
    {
        lock (streamsGate)
        {
            return streams.GetValueOrDefault(name);
        }
    }

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

    /// <summary>Adds a change in stored bytes to the usage of a medium (the storage-update handler of every stream).</summary>
    public void AddUsage(StorageMedium medium, long bytes)
    {
        if (medium == StorageMedium.Memory)
        {
            Interlocked.Add(ref memoryUsed, bytes);
        }
        else
        {
            Interlocked.Add(ref storageUsed, bytes);
        }
    }

    /// <summary>Whether the server-wide limit of a medium is reached (nats-server <c>limitsExceeded</c>).</summary>
    public bool LimitsExceeded(StorageMedium medium) => medium == StorageMedium.Memory
        ? MemoryUsed > Options.EffectiveMaxMemoryStore
        : StorageUsed > Options.EffectiveMaxFileStore;

    /// <summary>Whether a stream with <paramref name="maxBytes"/> fits the medium's limit beside the reservations (nats-server <c>checkBytesLimits</c>).</summary>
    public bool FitsReservation(StorageMedium medium, long maxBytes, long alreadyReserved = 0)
    {
        var add = maxBytes < 0 ? 1 : maxBytes;
        return medium == StorageMedium.Memory
            ? MemoryReserved - alreadyReserved + add <= Options.EffectiveMaxMemoryStore
            : StorageReserved - alreadyReserved + add <= Options.EffectiveMaxFileStore;
    }

    /// <summary>Adds (<paramref name="sign"/> 1) or releases (-1) a stream's <c>max_bytes</c> reservation; unlimited streams reserve nothing.</summary>
    public void Reserve(StorageMedium medium, long maxBytes, int sign)
    {
        if (maxBytes <= 0)
        {
            return;
        }

        if (medium == StorageMedium.Memory)
        {
            Interlocked.Add(ref memoryReserved, sign * maxBytes);
        }
        else
        {
            Interlocked.Add(ref storageReserved, sign * maxBytes);
        }
    }

    /// <summary>Sends an API reply through the API client.</summary>
    public void Reply(string? reply, byte[] body)
    {
        if (!string.IsNullOrEmpty(reply) && apiClient is { } client)
        {
            client.Publish(reply, body);
        }
    }

    private static string FormatBytes(long bytes) => bytes >= 1L << 30
        ? (bytes / (double)(1L << 30)).ToString("0.00", CultureInfo.InvariantCulture) + " GB"
        : (bytes / (double)(1L << 20)).ToString("0.00", CultureInfo.InvariantCulture) + " MB";
}
