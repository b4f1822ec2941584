using Broker.Abstractions;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// The collaborators a consumer makes only when it uses them, in one object made with the first: the outbox of control
/// messages, advisories and ack metrics (<see cref="ConsumerEvents"/>), pacing (<see cref="DeliveryPacer"/>), an
/// inactivity clock, a pause, priority groups and the flow-control subscription. An idle push consumer without any
/// (an MQTT QoS 1 subscription's) holds one null reference where it held seven fields and an outbox (80 B, issue 25).
/// Guarded by the consumer's lock, as the collaborators are.
/// </summary>
internal sealed class ConsumerSideParts
{
    public ConsumerOutbox? Outbox;
    public ConsumerEvents? Events;
    public DeliveryPacer? Pacer;
    public InactivityClock? Inactivity;
    public ConsumerPause? Pause;
    public ConsumerPriority? Priority;
    public IBusSubscription? FlowControl;

    /// <summary>Drops the flow-control subscription and stops every timer (the consumer stops).</summary>
    public void Stop()
    {
        FlowControl?.Dispose();
        Inactivity?.Stop();
        Pause?.Stop();
        Priority?.Stop();
        Pacer?.Stop();
    }
}
