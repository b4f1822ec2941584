namespace Broker.Core.Internal.Clients;

/// <summary>What the current thread is doing for the bus; how the bus knows where a call comes from, allocation-free.</summary>
internal static class BusThread
{
    /// <summary>The in-process client whose handlers this thread is running, or <see langword="null"/>.</summary>
    [ThreadStatic]
    public static InProcessClient? Draining;

    /// <summary>
    /// Set while an adapter's output handler or writer runs under its connection's output lock: a bus call from there
    /// would take locks in the wrong order, so it is refused.
    /// </summary>
    [ThreadStatic]
    public static bool InOutputCallback;
}
