using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Accounts;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.JetStream;

/// <summary>
/// Puts one account's MQTT state on that account's JetStream, as nats-server's MQTT does (<c>mqttCreateAccountSessionManager</c>):
/// ensures the account's streams (<see cref="MqttStreams"/>), then switches the account's sessions and retained
/// messages to <see cref="JetStreamSessionStore"/> and <see cref="JetStreamRetainedStore"/> and loads the retained
/// messages. Every request goes through bus clients bound to the account, so the streams, their consumers and their
/// messages live in the account's JetStream and no other account sees them. With <see cref="MqttOptions.JetStreamDomain"/>
/// the requests go to that domain's API (still from the account).
/// </summary>
/// <remarks>
/// Made by <see cref="MqttAccounts"/> with the account's first MQTT client. The JetStream engine subscribes an
/// account's API only once its streams are recovered, so <c>$JS.API.INFO</c> is asked until it answers; the answer
/// that the account has no JetStream (10039) refuses the account's clients, as nats-server refuses them.
/// </remarks>
internal sealed class MqttJetStream : IAsyncDisposable
{
    private static readonly TimeSpan RetryDelay = TimeSpan.FromMilliseconds(100);
    private static readonly TimeSpan WarnEvery = TimeSpan.FromSeconds(10);

    private readonly MqttAccount account;
    private readonly IMessageBus bus;
    private readonly MqttOptions options;
    private readonly ILogger logger;
    private JetStreamRetainedStore? retainedStore;
    private IBusClient? qosClient;

    /// <param name="account">The account whose state is put on its JetStream.</param>
    /// <param name="bus">The bus the account's clients are made on.</param>
    /// <param name="options">The adapter's options.</param>
    /// <param name="logger">The adapter's logger.</param>
    public MqttJetStream(MqttAccount account, IMessageBus bus, MqttOptions options, ILogger logger)
    {
        this.account = account;
        this.bus = bus;
        this.options = options;
        this.logger = logger;
    }

    /// <summary>The API client while the state is on JetStream, else <see langword="null"/> (QoS 1/2 delivery uses it).</summary>
    public JetStreamClient? Api { get; private set; }

    /// <summary>The storage of the streams, once they are ensured.</summary>
    public StreamStorage? Storage { get; private set; }

    public async ValueTask DisposeAsync()
    {
        if (retainedStore is not null)
        {
            await retainedStore.DisposeAsync().ConfigureAwait(false);
            retainedStore = null;
        }

        if (qosClient is { } client)
        {
            qosClient = null;
            await client.DisposeAsync().ConfigureAwait(false);
        }

        if (Api is { } api)
        {
            Api = null;
            await api.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Loads the account's state from its JetStream; never throws. When the account has no JetStream,
    /// <see cref="MqttAccount.Refusal"/> says so; when the streams cannot be set up, the state stays in memory.
    /// </summary>
    public async Task LoadAsync(CancellationToken cancellationToken)
    {
        JetStreamClient api;
        try
        {
            api = new JetStreamClient(
                bus.CreateClient(new BusClientOptions { Name = "MQTT JetStream", Account = account.Name }),
                options.JetStreamApiTimeout,
                ownsClient: true,
                domain: options.JetStreamDomain);
        }
        catch (ArgumentException)
        {
            // Removed by a reload while its first client connected.
            account.Refusal = $"the broker has no account \"{account.Name}\"";
            return;
        }

        if (options.JetStreamDomain is { } domain)
        {
            MqttLog.StateInDomain(logger, account.Name, domain, api.Prefix);
        }

        var started = Environment.TickCount64;
        var warned = started;
        while (true)
        {
            try
            {
                await WaitForApiAsync(api, cancellationToken).ConfigureAwait(false);
                await SwitchToJetStreamAsync(api, cancellationToken).ConfigureAwait(false);
                return;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                break;
            }
            catch (JetStreamApiException ex) when (ex.ErrorCode == 0)
            {
                // Nothing answered, or too late: the engine is busy, not there yet, or already stopped (the host
                // stops it before this service). Start over until it answers or the adapter stops.
                var now = Environment.TickCount64;
                if (now - warned >= (long)WarnEvery.TotalMilliseconds)
                {
                    warned = now;
                    MqttLog.WaitingForJetStream(logger, account.Name, (int)((now - started) / 1000), ex.Message);
                }

                try
                {
                    await Task.Delay(RetryDelay, cancellationToken).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    break;
                }
            }
            catch (JetStreamApiException ex) when (ex.ErrorCode == JetStreamApiException.NotEnabledForAccount)
            {
                // JetStream runs, but not for this account: its MQTT clients are refused, as nats-server refuses them
                // ("unable to connect: lookup sessions stream for account ...: JetStream not enabled for account").
                account.Refusal = $"lookup sessions stream for account \"{account.Name}\": {ex.Description} ({ex.ErrorCode})";
                break;
            }
            catch (JetStreamApiException ex)
            {
                // A definite refusal (overlapping subjects of an operator's stream, limits, ...): MQTT keeps working on
                // the memory stores and the operator sees why in the log.
                MqttLog.StateSetupFailed(logger, account.Name, ex);
                break;
            }
        }

        await api.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>Ensures the streams, loads the retained messages and switches the handler's stores.</summary>
    private async Task SwitchToJetStreamAsync(JetStreamClient api, CancellationToken cancellationToken)
    {
        var started = Environment.TickCount64;
        var (storage, memoryReason) = await MqttStreams.EnsureAsync(api, cancellationToken).ConfigureAwait(false);
        if (memoryReason is not null)
        {
            MqttLog.StreamsInMemory(logger, account.Name, memoryReason);
        }

        var retained = new JetStreamRetainedStore(api, logger);
        try
        {
            await account.Retained.LoadAsync(retained, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await retained.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        // A failed earlier attempt may have switched to its own store already.
        if (retainedStore is not null)
        {
            await retainedStore.DisposeAsync().ConfigureAwait(false);
        }

        retainedStore = retained;

        // QoS 1 and 2 delivery: deliveries and acknowledgements on a client of their own, beside the API's requests.
        // Enabled first: sessions purged below release their consumers through it.
        qosClient ??= bus.CreateClient(new BusClientOptions { Name = "MQTT QoS", Account = account.Name });
        account.EnableQos(new QosMessages(api, qosClient, options));

        var sessions = new JetStreamSessionStore(api, logger);
        if (await sessions.PurgeExpiredAsync(account.Sessions.Discarded, account.Sessions.ScheduleStored, cancellationToken).ConfigureAwait(false) is > 0 and var purged)
        {
            MqttLog.ExpiredSessionsPurged(logger, account.Name, purged);
        }

        await sessions.LoadIndexAsync(cancellationToken).ConfigureAwait(false);
        account.Sessions.UseStore(sessions);
        Storage = storage;
        Api = api;
        MqttLog.StateOnJetStream(logger, account.Name, storage == StreamStorage.File ? "file" : "memory", account.Retained.Count, Environment.TickCount64 - started);
    }

    /// <summary>
    /// Asks <c>$JS.API.INFO</c> (or the domain's) until the engine answers: it subscribes its API only after recovering
    /// its streams.
    /// </summary>
    private async Task WaitForApiAsync(JetStreamClient api, CancellationToken cancellationToken)
    {
        var started = Environment.TickCount64;
        var warned = started;
        while (true)
        {
            string reason;
            try
            {
                if (await api.IsAvailableAsync(cancellationToken).ConfigureAwait(false))
                {
                    return;
                }

                reason = $"no responders on {api.Prefix}INFO";
            }
            catch (JetStreamApiException ex) when (ex.ErrorCode == 0)
            {
                // Late answer: the engine is busy (recovering).
                reason = ex.Description;
            }

            var now = Environment.TickCount64;
            if (now - warned >= (long)WarnEvery.TotalMilliseconds)
            {
                warned = now;
                MqttLog.WaitingForJetStream(logger, account.Name, (int)((now - started) / 1000), reason);
            }

            await Task.Delay(RetryDelay, cancellationToken).ConfigureAwait(false);
        }
    }
}
