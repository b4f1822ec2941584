using System.Collections.Concurrent;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.JetStream;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The <c>"mqtt"</c> protocol: serves connections of the MQTT listener and those the WebSocket plugin hands over from
/// its <c>/mqtt</c> path. Holds what the connections share (options, the bus, sessions) and runs one timer for all of
/// them (keep alive, CONNECT timeout, session expiry), so an idle connection costs no timer of its own.
/// </summary>
internal sealed class MqttProtocolHandler : IProtocolHandler, IQosSource, IHostedService, IAsyncDisposable
{
    /// <summary>How often keep alives, CONNECT timeouts and session expiry are checked.</summary>
    private static readonly TimeSpan SweepInterval = TimeSpan.FromMilliseconds(250);

    private readonly ConcurrentDictionary<MqttConnection, byte> connections = new();
    private readonly CancellationTokenSource stopping = new();
    private Task sweeper = Task.CompletedTask;

    public MqttProtocolHandler(MqttOptions options, IMessageBus bus, ISessionStore store, IRetainedStore retainedStore, ILogger logger)
    {
        Options = options;
        Bus = bus;
        Sessions = new SessionManager(store, logger);
        Retained = new RetainedMessages(retainedStore);
        Logger = logger;
    }

    public string Protocol => MqttPlugin.ProtocolName;

    public MqttOptions Options { get; }

    public IMessageBus Bus { get; }

    public SessionManager Sessions { get; }

    public RetainedMessages Retained { get; }

    /// <summary>The adapter's state on JetStream (its API client, once loaded), or <see langword="null"/> without the plugin's service.</summary>
    public MqttJetStream? JetStream { get; set; }

    /// <summary>
    /// QoS 1 and 2 delivery on JetStream, once its stream is ready; <see langword="null"/> without JetStream, when
    /// subscriptions are granted QoS 0 (as the docs say).
    /// </summary>
    public QosMessages? Qos { get; private set; }

    /// <summary>Turns QoS 1 and 2 delivery on: the stream exists. Ended sessions then release their consumers.</summary>
    public void EnableQos(QosMessages qos)
    {
        Qos = qos;
        Sessions.Discarded = record => qos.DeleteConsumersAsync(record.Subscriptions, Logger);
    }

    public ILogger Logger { get; }

    /// <summary>Connections being served now.</summary>
    public int ConnectionCount => connections.Count;

    /// <summary>The connections being served now.</summary>
    public IEnumerable<MqttConnection> Connections => connections.Keys;

    public async Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(connection);
        var client = new MqttConnection(this, connection);
        connections.TryAdd(client, 0);
        try
        {
            await client.RunAsync(cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            connections.TryRemove(client, out _);
        }
    }

    public Task StartAsync(CancellationToken cancellationToken)
    {
        sweeper = SweepAsync(stopping.Token);
        return Task.CompletedTask;
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        await stopping.CancelAsync().ConfigureAwait(false);
        await sweeper.ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        if (!stopping.IsCancellationRequested)
        {
            await stopping.CancelAsync().ConfigureAwait(false);
        }

        await sweeper.ConfigureAwait(false);
        stopping.Dispose();
    }

    private async Task SweepAsync(CancellationToken cancellationToken)
    {
        using var timer = new PeriodicTimer(SweepInterval);
        try
        {
            while (await timer.WaitForNextTickAsync(cancellationToken).ConfigureAwait(false))
            {
                var now = Environment.TickCount64;
                foreach (var connection in connections.Keys)
                {
                    connection.CheckTimers(now);
                }

                await Sessions.ExpireAsync(now).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }
}
