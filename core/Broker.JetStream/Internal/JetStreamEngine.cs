using System.Globalization;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Internal;

/// <summary>
/// The server's JetStream (nats-server's <c>jetStream</c>): the storage providers, the server's limits with the
/// usage and reservations of all accounts against them, the one API queue, and the accounts that have JetStream
/// (<see cref="JetStreamAccount"/>). With no account configured, the global account <c>$G</c> has JetStream with the
/// server's limits; once accounts are configured, only those whose configuration enables it do (nats-server's
/// <c>globalAccountOnly</c>), and the others answer the API with 10039 (<see cref="JetStreamDisabledAccount"/>).
/// It reaches the broker only through bus clients and keeps messages only through <see cref="IStreamStoreProvider"/>s.
/// API requests are answered one at a time on a queue of their own (nats-server's API queue), so a request never
/// blocks the publisher's thread.
/// </summary>
internal sealed partial class JetStreamEngine : IHostedService, IAsyncDisposable
{
    private readonly Dictionary<string, IStreamStoreProvider> providers = new(StringComparer.Ordinal);
    private readonly ApiQueue<QueuedApiRequest> apiQueue = new();
    private readonly CancellationTokenSource stopping = new();
    private readonly IAccountDirectory? directory;
    private Task? apiLoop;

    // Bytes held by all accounts' streams on memory and disk stores; reserved by streams with max_bytes (nats-server's accounting).
    private long memoryUsed;
    private long storageUsed;
    private long memoryReserved;
    private long storageReserved;

    public JetStreamEngine(JetStreamOptions options, IMessageBus bus, IEnumerable<IStreamStoreProvider> storeProviders, ISubjectInterest? interest, ILoggerFactory loggerFactory, IAccountDirectory? directory = null, ServerIdentity? identity = null)
    {
        Options = options;
        Identity = identity;
        Bus = bus;
        Interest = interest;
        LoggerFactory = loggerFactory;
        Logger = loggerFactory.CreateLogger("Broker.JetStream");
        this.directory = directory;
        foreach (var provider in storeProviders)
        {
            providers.TryAdd(provider.StorageType, provider);
        }
    }

    public JetStreamOptions Options { get; }

    public IMessageBus Bus { get; }

    /// <summary>The broker's interest check of <c>$G</c>.</summary>
    public ISubjectInterest? Interest { get; }

    public ILoggerFactory LoggerFactory { get; }

    /// <summary>The server's id and name (the API audit's <c>server</c>), when the host provides them.</summary>
    public ServerIdentity? Identity { get; }

    public ILogger Logger { get; }

    /// <summary>The one timer that ends the pauses of all accounts' consumers.</summary>
    public Consumers.ConsumerPauseTimer Pauses { get; } = new();

    public long StartedAt { get; private set; }

    public IReadOnlyCollection<string> StorageTypes => providers.Keys;

    public long MemoryUsed => Interlocked.Read(ref memoryUsed);

    public long StorageUsed => Interlocked.Read(ref storageUsed);

    public long MemoryReserved => Interlocked.Read(ref memoryReserved);

    public long StorageReserved => Interlocked.Read(ref storageReserved);

    /// <summary>API responses sent by all accounts.</summary>
    public long ApiTotal => JetStreamAccounts().Sum(a => a.Api.Total) + Interlocked.Read(ref retiredApiTotal);

    /// <summary>API responses sent with an error by all accounts.</summary>
    public long ApiErrors => JetStreamAccounts().Sum(a => a.Api.Errors) + Interlocked.Read(ref retiredApiErrors);

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

        apiLoop = Task.Run(ProcessApiAsync, CancellationToken.None);
        await StartAccountsAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        await StopWatchingAccountsAsync().ConfigureAwait(false);

        foreach (var account in JetStreamAccounts())
        {
            account.StopListening();
        }

        apiQueue.Complete();
        await stopping.CancelAsync().ConfigureAwait(false);
        if (apiLoop is not null)
        {
            await apiLoop.ConfigureAwait(false);
        }

        await StopAccountsAsync().ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        if (!stopping.IsCancellationRequested)
        {
            await StopAsync(CancellationToken.None).ConfigureAwait(false);
        }

        stopping.Dispose();
        applyGate.Dispose();
        Pauses.Dispose();
    }

    public IStreamStoreProvider? FindProvider(string storageType) => providers.GetValueOrDefault(storageType);

    /// <summary>The storage providers, one per storage type.</summary>
    public IEnumerable<IStreamStoreProvider> Providers => providers.Values;

    /// <summary>Adds a change in stored bytes to the server's usage of a medium.</summary>
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

    /// <summary>Queues an API request of <paramref name="account"/> for the API loop.</summary>
    public void Enqueue(JetStreamAccount account, ApiRequest request) => apiQueue.TryWrite(new QueuedApiRequest(account, request));

    /// <summary>Queues an account purge request of the system account for the API loop (one queue: it never runs beside another request).</summary>
    public void EnqueueSystem(ApiRequest request) => apiQueue.TryWrite(new QueuedApiRequest(null, request));

    private async Task ProcessApiAsync()
    {
        while (await apiQueue.WaitToReadAsync().ConfigureAwait(false))
        {
            if (!apiQueue.TryRead(out var queued))
            {
                continue;
            }

            var (account, request) = queued;
            if (account is { Stopped: true })
            {
                // The account lost JetStream (a reload) after the request came: nobody answers it, as after the change.
                continue;
            }

            try
            {
                if (account is null)
                {
                    await (systemApi?.PurgeAsync(request) ?? Task.CompletedTask).ConfigureAwait(false);
                }
                else
                {
                    await account.Api.HandleAsync(request).ConfigureAwait(false);
                }
            }
#pragma warning disable CA1031 // One faulty request must not stop the API.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                JetStreamLog.ApiFailed(Logger, request.Subject, ex);
            }
        }
    }

    private static string FormatBytes(long bytes) => bytes >= 1L << 30
        ? (bytes / (double)(1L << 30)).ToString("0.00", CultureInfo.InvariantCulture) + " GB"
        : (bytes / (double)(1L << 20)).ToString("0.00", CultureInfo.InvariantCulture) + " MB";

    /// <summary>One API request on the queue, with the account it was asked in (null: the system account's, <see cref="SystemAccountApi"/>).</summary>
    private readonly record struct QueuedApiRequest(JetStreamAccount? Account, ApiRequest Request);
}
