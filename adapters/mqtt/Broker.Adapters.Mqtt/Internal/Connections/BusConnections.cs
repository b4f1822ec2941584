using Broker.Abstractions;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The bus connections of one MQTT client. <see cref="Bus"/> is authenticated as one of the broker's users: their
/// permissions apply to every publish and subscription, and it is what /connz lists (type mqtt).
/// MQTT 5 no-local subscriptions need a second one with the same credentials and echo off, opened with the first such
/// subscription; from then on the client's publishes go through it, so they never reach its no-local subscriptions
/// but do reach the others (on <see cref="Bus"/>). The bus delivers from a queue, not on the publisher's thread, so
/// which connection published is known only this way. The credentials are kept for that second connection only, so
/// a client that cannot make no-local subscriptions (MQTT 3.1.1) is given none to keep: its object holds the one bus
/// connection alone (<see cref="Create"/>; 32 B less per MQTT 3.1.1 connection, issue 25).
/// </summary>
internal class BusConnections(IBusConnection bus)
{
    /// <summary>The client's bus connections; with <paramref name="credentials"/> (MQTT 5) able to open the echo-less one.</summary>
    public static BusConnections Create(IMessageBus broker, TransportConnection transport, BusConnectOptions? credentials, IBusConnection bus)
        => credentials is null ? new BusConnections(bus) : new WithNoLocal(broker, transport, credentials, bus);

    /// <summary>The client's bus connection.</summary>
    public IBusConnection Bus => bus;

    /// <summary>The echo-less connection of no-local subscriptions, once opened.</summary>
    public virtual IBusConnection? OwnPublishes => null;

    /// <summary>What the client's publishes go through: the echo-less connection once there is one.</summary>
    public virtual IBusConnection Publisher => bus;

    /// <summary>Opens the echo-less bus connection for no-local subscriptions, once; false when the broker refuses it.</summary>
    public virtual bool EnsureOwnPublishes()
        => throw new InvalidOperationException("No-local subscriptions are MQTT 5's; this client's credentials were not kept.");

    /// <summary>Closes both; a slow consumer is said to the bus in nats-server's words, so /varz counts it and /connz shows it.</summary>
    public virtual async ValueTask CloseAsync(string? reason)
    {
        if (reason == PacketOutput.SlowConsumerReason)
        {
            bus.Close(PacketOutput.SlowConsumerReason);
        }

        await bus.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>An MQTT 5 client's: the credentials kept for the echo-less connection, and that connection once opened.</summary>
    private sealed class WithNoLocal(IMessageBus broker, TransportConnection transport, BusConnectOptions credentials, IBusConnection bus)
        : BusConnections(bus)
    {
        private IBusConnection? ownPublishes;

        public override IBusConnection? OwnPublishes => ownPublishes;

        public override IBusConnection Publisher => ownPublishes ?? Bus;

        public override bool EnsureOwnPublishes()
        {
            if (ownPublishes is not null)
            {
                return true;
            }

            var connecting = broker.ConnectAsync(transport, new BusConnectOptions
            {
                Protocol = credentials.Protocol,
                Name = credentials.Name,
                User = credentials.User,
                Password = credentials.Password,
                Token = credentials.Token,
                AuthenticatedByAdapter = credentials.AuthenticatedByAdapter,
                NoAuthUser = credentials.NoAuthUser,
                Account = credentials.Account,
                Echo = false,
            });

            // The broker answers at once (it only checks credentials and limits); the read loop must not wait here.
            var result = connecting.IsCompleted ? connecting.Result : connecting.AsTask().GetAwaiter().GetResult();
            ownPublishes = result.Connection;
            return ownPublishes is not null;
        }

        public override async ValueTask CloseAsync(string? reason)
        {
            await base.CloseAsync(reason).ConfigureAwait(false);
            if (ownPublishes is not null)
            {
                await ownPublishes.DisposeAsync().ConfigureAwait(false);
            }
        }
    }
}
