using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Accounts;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// One MQTT client connection, the owner of its parts: the packets as they come (<see cref="PacketSession"/>) and
/// the output they and the deliveries are written to (<see cref="PacketOutput"/>); once CONNECT is accepted, the
/// client's publishes (<see cref="InboundPublishes"/>, acknowledged through <see cref="InboundQosFlow"/>), its
/// subscriptions (<see cref="SubscriptionManager"/>) and the PUBLISH packets sent to it
/// (<see cref="OutboundPublishes"/>, QoS 1 and 2 in flight in <see cref="OutboundQosFlow"/>). The connection itself
/// holds what CONNECT establishes and what outlives the parts: the session, the bus connections, the will, and the
/// teardown. Partial files: Connect (CONNECT/CONNACK, sessions), Close (DISCONNECT, will, timers, teardown).
/// </summary>
internal sealed partial class MqttConnection : ConnectionStatus, IPacketHandler, IOutboundQosSource
{
    /// <summary>How long a closing connection waits for the retained writes queued before it (the broker's drain waits 5 s).</summary>
    private static readonly TimeSpan RetainedFlushTimeout = TimeSpan.FromSeconds(5);

    private readonly MqttProtocolHandler handler;
    private readonly PacketOutput output;
    private readonly PacketSession packets;

    /// <summary>The packets as they come; their loop when it parks (<see cref="PacketSession.Run"/>).</summary>
    public PacketSession Packets => packets;

    // The connection's status is its base part (the transport is held there too); the parts are given this.
    private ConnectionStatus status => this;

    // The handler's options and logger, read through it: fields of their own cost every connection 16 B (issue 25).
    private MqttOptions Options => handler.Options;

    private ILogger Logger => handler.Logger;

    // The listener's stop token: the loop's reads do not wait on it (see RunAsync).
    private readonly CancellationToken stopping;

    // The parts that exist once CONNECT was accepted (null before, or when it was refused); the client's publishes
    // from its first PUBLISH or PUBREL on (Inbound); the outbound QoS flow from the first QoS 1 or 2 delivery, client
    // acknowledgement or PUBREL to send again on (OutboundQos).
    private OutboundQosFlow? outboundQos;
    private InboundPublishes? inbound;
    private SubscriptionManager? subscriptions;

    public MqttConnection(MqttProtocolHandler handler, TransportConnection transport, CancellationToken stopping)
        : base(transport)
    {
        this.handler = handler;
        this.stopping = stopping;
        output = new PacketOutput(transport, status, Logger);
        packets = new PacketSession(Options.MaxPacketSize, output, this);
    }

    /// <summary>The client id once CONNECT was accepted.</summary>
    public string? ClientId => session?.ClientId;

    /// <summary>The listener's stop token: once it fired, the handler wakes the loop's read (see <see cref="RunAsync"/>).</summary>
    public CancellationToken Stopping => stopping;

    /// <summary>Whether a flush is queued and has not run yet (benchmarks wait for it).</summary>
    public bool FlushPending => output.FlushPending;

    public override string ToString() => status.Name;

    /// <summary>
    /// The connection's one loop, from the first byte to the teardown: reads and hands each read to
    /// <see cref="PacketSession.ProcessAsync"/>; the handler's list is left here too. A served connection whose input
    /// parks (<see cref="IParkingReader"/>) runs <see cref="PacketSession.Run"/> instead: no state machine (issue 25).
    /// </summary>
    public async Task RunAsync()
    {
        Exception? failure = null;
        try
        {
            while (!status.IsClosing)
            {
                // The read waits without the stop token: a token on every pending read is a registration per idle
                // connection (issue 25). The handler wakes the reads of its connections once, when the token fires.
                var result = await packets.ReadAsync(CancellationToken.None).ConfigureAwait(false);
                if (result.IsCanceled)
                {
                    stopping.ThrowIfCancellationRequested();
                }

                if (!await packets.ProcessAsync(result, stopping).ConfigureAwait(false))
                {
                    break;
                }
            }
        }
        catch (Exception ex)
        {
            failure = ex;
        }

        await EndAsync(failure).ConfigureAwait(false);
    }

    void IPacketHandler.LoopEnded(Exception? failure) => _ = EndAsync(failure);

    // The loop's end: a violation is answered, the stop said goodbye to, a read error noted (another failure faults the
    // task, after the teardown, the wait for the retained writes queued so far and the handler's list).
    private async Task EndAsync(Exception? failure)
    {
        try
        {
            if (failure is MqttProtocolException violation)
            {
                OnViolation(violation);
            }
            else if (failure is OperationCanceledException && stopping.IsCancellationRequested)
            {
                SendDisconnect(0x8B, "server shutting down");
                status.NoteReason("server shutting down");
            }
            else if (failure is IOException or InvalidOperationException || (failure is not null && handler.SwallowsFailure(this, failure)))
            {
                status.NoteReason("read error: " + failure.Message);
            }
            else if (failure is not null)
            {
                System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
            }
        }
        finally
        {
            try
            {
                await CloseAsync().ConfigureAwait(false);
                if (accountState is { } state)
                {
                    await state.Retained.FlushQueuedAsync(RetainedFlushTimeout).ConfigureAwait(false);
                }
            }
            finally
            {
                handler.Remove(this);
            }
        }
    }

    ValueTask IPacketHandler.ConnectAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken) => HandleConnectAsync(body, cancellationToken);

    void IPacketHandler.Publish(byte flags, ReadOnlyMemory<byte> body) => Inbound().Handle(flags, body);

    void IPacketHandler.PubRel(ReadOnlySpan<byte> body) => Inbound().Release(body);

    void IPacketHandler.DeliveryAck(PacketType type, ReadOnlySpan<byte> body) => OutboundQos.Acknowledged(type, body);

    ValueTask IPacketHandler.SubscribeAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken) => subscriptions!.SubscribeAsync(body, cancellationToken);

    void IPacketHandler.Unsubscribe(ReadOnlySpan<byte> body) => subscriptions!.Unsubscribe(body);

    void IPacketHandler.Disconnect(ReadOnlySpan<byte> body) => HandleDisconnect(body);

    /// <summary>
    /// Makes the parts a connected client needs, each with the state it owns and what it depends on; called once the
    /// session is attached, before CONNACK. The account's state gives the session store, the retained messages and
    /// QoS 1 and 2 delivery, all of the client's account.
    /// </summary>
    private void StartParts(MqttSession attached, BusConnections connected, MqttAccount state)
    {
        var store = state.Sessions.Store;
        subscriptions = new SubscriptionManager(state, store, Options, connected, attached, output, this, clientTopicAliasMaximum, InflightLimit, v5);
    }

    // Deliveries in flight at most: the client's receive maximum (MQTT 5) or nats-server's 65535 per session.
    private int InflightLimit => v5 ? clientReceiveMaximum : ushort.MaxValue;

    /// <summary>
    /// The QoS 1 and 2 deliveries in flight, made on first use (by a producer's delivery or the read loop, hence the
    /// exchange): a QoS 0 subscriber never holds it (64 B, issue 25). Only once the parts were started.
    /// </summary>
    public OutboundQosFlow OutboundQos
    {
        get
        {
            if (Volatile.Read(ref outboundQos) is { } made)
            {
                return made;
            }

            var flow = new OutboundQosFlow(output, session!, subscriptions!.Store, accountState!, v5, InflightLimit);
            return Interlocked.CompareExchange(ref outboundQos, flow, null) ?? flow;
        }
    }

    /// <summary>
    /// The client's publishes (with their acknowledgements, <see cref="InboundQosFlow"/>), made by the read loop with the
    /// first PUBLISH or PUBREL after CONNECT: a client that only subscribes never holds them (issue 25).
    /// </summary>
    private InboundPublishes Inbound()
    {
        if (inbound is null)
        {
            var state = accountState!;
            var acknowledgements = new InboundQosFlow(output, session!, state.Sessions.Store, status, Logger, v5, Options.ReceiveMaximum);
            inbound = new InboundPublishes(Options, state, state.Retained, buses!, session!, acknowledgements, status, Logger, v5);
        }

        return inbound;
    }
}
