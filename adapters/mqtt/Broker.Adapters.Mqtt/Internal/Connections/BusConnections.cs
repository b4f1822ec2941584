using Broker.Abstractions;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The bus connections of one MQTT client. <see cref="Bus"/> is authenticated as one of the broker's users: their
/// permissions apply to every publish and subscription, and it is what /connz lists (type mqtt).
/// MQTT 5 no-local subscriptions need a second one with the same credentials and echo off, opened with the first such
/// subscription; from then on the client's publishes go through it, so they never reach its no-local subscriptions
/// but do reach the others (on <see cref="Bus"/>). The bus delivers from a queue, not on the publisher's thread, so
/// which connection published is known only this way. The credentials are kept for that second connection only, so
/// a client that cannot make no-local subscriptions (MQTT 3.1.1) is given none to keep.
/// </summary>
internal sealed class BusConnections(IMessageBus broker, TransportConnection transport, BusConnectOptions? credentials, IBusConnection bus)
{
    private IBusConnection? ownPublishes;

    /// <summary>The client's bus connection.</summary>
    public IBusConnection Bus => bus;

    /// <summary>The echo-less connection of no-local subscriptions, once opened.</summary>
    public IBusConnection? OwnPublishes => ownPublishes;

    /// <summary>What the client's publishes go through: the echo-less connection once there is one.</summary>
    public IBusConnection Publisher => ownPublishes ?? bus;

    /// <summary>Opens the echo-less bus connection for no-local subscriptions, once; false when the broker refuses it.</summary>
    public bool EnsureOwnPublishes()
    {
        if (ownPublishes is not null)
        {
            return true;
        }

        if (credentials is null)
        {
            throw new InvalidOperationException("No-local subscriptions are MQTT 5's; this client's credentials were not kept.");
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

    /// <summary>Closes both; a slow consumer is said to the bus in nats-server's words, so /varz counts it and /connz shows it.</summary>
    public async ValueTask CloseAsync(string? reason)
    {
        if (reason == PacketOutput.SlowConsumerReason)
        {
            bus.Close(PacketOutput.SlowConsumerReason);
        }

        await bus.DisposeAsync().ConfigureAwait(false);
        if (ownPublishes is not null)
        {
            await ownPublishes.DisposeAsync().ConfigureAwait(false);
        }
    }
}
