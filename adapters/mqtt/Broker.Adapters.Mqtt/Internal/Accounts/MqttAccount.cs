using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.JetStream;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Accounts;

/// <summary>
/// The MQTT state of one broker account, as nats-server's <c>mqttAccountSessionManager</c>: its sessions, retained
/// messages and QoS 1 and 2 delivery, kept in the account's own JetStream (the <c>$MQTT_</c> streams of that account,
/// <see cref="MqttJetStream"/>) when the broker runs JetStream, in memory otherwise. Made by <see cref="MqttAccounts"/>
/// with the account's first MQTT client; nothing of it is visible to another account.
/// </summary>
internal sealed class MqttAccount : IQosSource, IAsyncDisposable
{
    /// <summary>How long a CONNECT waits for the account's state to be loaded before it is refused (server unavailable).</summary>
    public static readonly TimeSpan ReadyTimeout = TimeSpan.FromSeconds(10);

    private readonly ILogger logger;
    private Task ready = Task.CompletedTask;
    private long readyAt;

    public MqttAccount(string name, ILogger logger)
    {
        Name = name;
        this.logger = logger;
        Sessions = new SessionManager(new MemorySessionStore(), logger);
        Retained = new RetainedMessages(new MemoryRetainedStore());
    }

    /// <summary>The broker account's name.</summary>
    public string Name { get; }

    public SessionManager Sessions { get; }

    public RetainedMessages Retained { get; }

    /// <summary>
    /// QoS 1 and 2 delivery on the account's JetStream, once its stream is ready; <see langword="null"/> without
    /// JetStream, when subscriptions are granted QoS 0 (as the docs say).
    /// </summary>
    public QosMessages? Qos { get; private set; }

    /// <summary>The account's state on JetStream (its API client once loaded), or <see langword="null"/> in memory.</summary>
    public MqttJetStream? JetStream { get; set; }

    /// <summary>
    /// Why the account's MQTT clients are refused, or <see langword="null"/>: set when the broker runs JetStream and
    /// the account has none (nats-server refuses every MQTT client of such an account).
    /// </summary>
    public string? Refusal { get; set; }

    /// <summary>
    /// Environment.TickCount64 when the state was loaded (0 when there was nothing to load), <see cref="long.MaxValue"/>
    /// before: a connection's CONNECT timeout counts from here at the earliest, so a CONNECT that waits for the state
    /// is not closed for it.
    /// </summary>
    public long ReadyAt => Volatile.Read(ref readyAt);

    /// <summary>Completes when the state is loaded (never faults).</summary>
    public Task Ready => ready;

    /// <summary>Starts loading the state; called once, by <see cref="MqttAccounts"/>, before any client waits for it.</summary>
    public void StartLoading(Func<MqttAccount, Task> load)
    {
        Volatile.Write(ref readyAt, long.MaxValue);
        ready = load(this);
        ready.ContinueWith(static (_, state) => Volatile.Write(ref ((MqttAccount)state!).readyAt, Environment.TickCount64), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    /// <summary>Waits for the state, at most <see cref="ReadyTimeout"/>.</summary>
    /// <exception cref="SessionStoreUnavailableException">The state is not loaded in time.</exception>
    public async Task WaitReadyAsync(CancellationToken cancellationToken)
    {
        try
        {
            await ready.WaitAsync(ReadyTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException ex)
        {
            throw new SessionStoreUnavailableException($"the MQTT state of account \"{Name}\" is not loaded yet (waited {ReadyTimeout.TotalSeconds:0}s)", ex);
        }
    }

    /// <summary>Turns QoS 1 and 2 delivery on: the stream exists. Ended sessions then release their consumers.</summary>
    public void EnableQos(QosMessages qos)
    {
        Qos = qos;
        // The list is made at the call, under the session manager's gate, though the deletes may finish after it.
        Sessions.Discarded = record => qos.DeleteConsumersAsync(ReleasedBy(record.ClientId, record.Subscriptions).ToList(), logger);
    }

    /// <summary>
    /// The subscriptions whose consumers go when a session ends or leaves them: all but the shared subscriptions that
    /// another session of the account still holds (a group's consumer lives as long as any member's session).
    /// </summary>
    public IEnumerable<SubscriptionRecord> ReleasedBy(string clientId, IEnumerable<SubscriptionRecord> subscriptions)
        => subscriptions.Where(s => s.Consumer is not { } consumer || !QosMessages.IsShared(consumer) || !Sessions.HoldsConsumer(consumer, clientId));

    public async ValueTask DisposeAsync()
    {
        if (JetStream is { } jetStream)
        {
            JetStream = null;
            await jetStream.DisposeAsync().ConfigureAwait(false);
        }
    }
}
