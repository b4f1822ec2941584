using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Connections;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.JetStream;

/// <summary>
/// Puts the adapter's state on JetStream when the broker runs it, as nats-server's MQTT does: ensures the streams
/// (<see cref="MqttStreams"/>), then switches the handler's sessions and retained messages to
/// <see cref="JetStreamSessionStore"/> and <see cref="JetStreamRetainedStore"/> and loads the retained messages.
/// Without JetStream the memory stores stay, unless <see cref="MqttOptions.JetStreamDomain"/> names another domain's. Done when the first MQTT client connects, as nats-server does, so a
/// broker that runs JetStream without MQTT clients has no <c>$MQTT_</c> streams.
/// </summary>
/// <remarks>
/// The host starts hosted services one after the other in plugin order (the MQTT plugin may come before JetStream's,
/// whose API is subscribed only once its streams are recovered), and opens listeners after all of them. So this
/// service does not wait in <see cref="StartAsync"/>: it loads in the background and sets
/// <see cref="SessionManager.Ready"/>, which every CONNECT awaits, and retries <c>$JS.API.INFO</c> until
/// the engine answers.
/// </remarks>
internal sealed class MqttJetStream : IHostedService, IAsyncDisposable
{
    private static readonly TimeSpan RetryDelay = TimeSpan.FromMilliseconds(100);
    private static readonly TimeSpan WarnEvery = TimeSpan.FromSeconds(10);

    private readonly MqttProtocolHandler handler;
    private readonly IMessageBus bus;
    private readonly bool jetStreamEnabled;
    private readonly ILogger logger;
    private readonly CancellationTokenSource stopping = new();
    private JetStreamRetainedStore? retainedStore;
    private IBusClient? qosClient;
    private Task loading = Task.CompletedTask;

    /// <param name="handler">The MQTT handler whose stores are switched.</param>
    /// <param name="bus">The bus the API client is made on.</param>
    /// <param name="jetStreamEnabled">Whether the broker runs JetStream (<see cref="ServerFeature.JetStream"/>).</param>
    /// <param name="logger">The adapter's logger.</param>
    public MqttJetStream(MqttProtocolHandler handler, IMessageBus bus, bool jetStreamEnabled, ILogger logger)
    {
        this.handler = handler;
        this.bus = bus;
        this.jetStreamEnabled = jetStreamEnabled;
        this.logger = logger;
        handler.JetStream = this;
    }

    /// <summary>The API client while the state is on JetStream, else <see langword="null"/> (QoS 1/2 delivery uses it).</summary>
    public JetStreamClient? Api { get; private set; }

    /// <summary>The storage of the streams, once they are ensured.</summary>
    public StreamStorage? Storage { get; private set; }

    /// <summary>Completes when the stores are chosen and the state is loaded (never faults).</summary>
    public Task Ready => loading;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        // With js_domain the state lives in that domain's JetStream, wherever it runs (nats-server's leaf node setup), so
        // the local JetStream need not be on; nobody serving it refuses CONNECTs as a silent local engine does.
        if (!jetStreamEnabled && handler.Options.JetStreamDomain is null)
        {
            // Said when the first MQTT client comes, as nats-server: a broker that never sees one has no MQTT state.
            handler.Sessions.ReadyWhenNeeded(() =>
            {
                MqttLog.StateInMemory(logger);
                return Task.CompletedTask;
            });
            return Task.CompletedTask;
        }

        handler.Sessions.ReadyWhenNeeded(() => loading = LoadAsync(stopping.Token));
        return Task.CompletedTask;
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        await stopping.CancelAsync().ConfigureAwait(false);
        await loading.ConfigureAwait(false);
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

    public async ValueTask DisposeAsync()
    {
        if (!stopping.IsCancellationRequested)
        {
            await StopAsync(CancellationToken.None).ConfigureAwait(false);
        }

        stopping.Dispose();
    }

    private async Task LoadAsync(CancellationToken cancellationToken)
    {
        var options = handler.Options;
        var api = new JetStreamClient(
            bus.CreateClient(new BusClientOptions { Name = "MQTT JetStream" }),
            options.JetStreamApiTimeout,
            ownsClient: true,
            domain: options.JetStreamDomain);
        if (options.JetStreamDomain is { } domain)
        {
            MqttLog.StateInDomain(logger, domain, api.Prefix);
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
                    MqttLog.WaitingForJetStream(logger, (int)((now - started) / 1000), ex.Message);
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
            catch (JetStreamApiException ex) when (ex.ErrorCode == 10039)
            {
                // JetStream runs, but not in $G (accounts are configured): the memory stores stay, as without JetStream.
                MqttLog.StateInMemoryNoAccountJetStream(logger);
                break;
            }
            catch (JetStreamApiException ex)
            {
                // A definite refusal (overlapping subjects of an operator's stream, limits, ...): MQTT keeps working on
                // the memory stores and the operator sees why in the log.
                MqttLog.StateSetupFailed(logger, ex);
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
            MqttLog.StreamsInMemory(logger, memoryReason);
        }

        var retained = new JetStreamRetainedStore(api, logger);
        try
        {
            await handler.Retained.LoadAsync(retained, cancellationToken).ConfigureAwait(false);
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
        qosClient ??= bus.CreateClient(new BusClientOptions { Name = "MQTT QoS" });
        handler.EnableQos(new QosMessages(api, qosClient, handler.Options));

        var sessions = new JetStreamSessionStore(api, logger);
        if (await sessions.PurgeExpiredAsync(handler.Sessions.Discarded, cancellationToken).ConfigureAwait(false) is > 0 and var purged)
        {
            MqttLog.ExpiredSessionsPurged(logger, purged);
        }

        await sessions.LoadIndexAsync(cancellationToken).ConfigureAwait(false);
        handler.Sessions.UseStore(sessions);
        Storage = storage;
        Api = api;
        MqttLog.StateOnJetStream(logger, storage == StreamStorage.File ? "file" : "memory", handler.Retained.Count, Environment.TickCount64 - started);
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
                MqttLog.WaitingForJetStream(logger, (int)((now - started) / 1000), reason);
            }

            await Task.Delay(RetryDelay, cancellationToken).ConfigureAwait(false);
        }
    }
}
