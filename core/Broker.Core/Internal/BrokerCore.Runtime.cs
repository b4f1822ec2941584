using Broker.Core.Internal.Hosting;
using Broker.Core.Internal.Monitoring;

namespace Broker.Core.Internal;

/// <summary>Where the broker is in its life, what it listens on, and the closed connections /connz remembers.</summary>
internal sealed partial class BrokerCore
{
    private int runState;
    private IReadOnlyList<ListenerHost> listeners = [];

    /// <summary>When the broker was created (nats-server's <c>start</c> in /varz).</summary>
    public DateTime StartedAt { get; } = DateTime.UtcNow;

    public BrokerRunState RunState => (BrokerRunState)Volatile.Read(ref runState);

    /// <summary>The bound listeners, set once they are all bound.</summary>
    public IReadOnlyList<ListenerHost> Listeners
    {
        get => Volatile.Read(ref listeners);
        set => Volatile.Write(ref listeners, value);
    }

    /// <summary>The last <see cref="BrokerOptions.MaxClosedClients"/> closed connections, oldest first.</summary>
    public ClosedConnectionRing ClosedClients { get; }

    public void SetRunState(BrokerRunState state) => Volatile.Write(ref runState, (int)state);

    /// <summary>Finds a listener by name, or <see langword="null"/>.</summary>
    public ListenerHost? FindListener(string name)
    {
        foreach (var listener in Listeners)
        {
            if (listener.Definition.Name == name)
            {
                return listener;
            }
        }

        return null;
    }
}

/// <summary>The broker's lifecycle, as /healthz and the lame-duck logic see it.</summary>
internal enum BrokerRunState
{
    Created,
    Starting,
    Running,
    LameDuck,
    Stopping,
    Stopped,
}
