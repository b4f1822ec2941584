namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>
/// The will of an MQTT 5 connection that closed with a Will Delay Interval while its session lives on: it waits in the
/// session (<see cref="MqttSession.PendingWill"/>) until the delay passes or the session ends, whichever is first, and
/// is then published (MQTT-3.1.2-8, MQTT-3.1.3-9); a new connection that resumes the session drops it, one that starts
/// clean ends the session and so publishes it (as Mosquitto does). Meanwhile the closed connection's bus connections
/// stay open, so the will is published with its user's permissions and account; resolving it closes them.
/// </summary>
internal sealed class DelayedWill
{
    private readonly Func<bool, Task> resolve;
    private int resolved;

    /// <param name="dueAt"><see cref="Environment.TickCount64"/> when the delay ends.</param>
    /// <param name="resolve">Publishes the will (true) or drops it (false), then closes the bus connections.</param>
    public DelayedWill(long dueAt, Func<bool, Task> resolve)
    {
        DueAt = dueAt;
        this.resolve = resolve;
    }

    /// <summary><see cref="Environment.TickCount64"/> when the delay ends.</summary>
    public long DueAt { get; }

    /// <summary>Publishes or drops the will, once; later calls do nothing.</summary>
    public Task ResolveAsync(bool publish) => Interlocked.Exchange(ref resolved, 1) == 0 ? resolve(publish) : Task.CompletedTask;
}
