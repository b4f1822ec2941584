namespace Broker.Core.Internal.Clients;

/// <summary>
/// When a connection closed, kept as UTC ticks (0 while open): 8 B where a <see cref="DateTimeOffset"/>? took 24 on every
/// connection (issue 25). Written once by the close, read by monitoring from any thread.
/// </summary>
internal struct CloseStamp
{
    private long ticks;

    /// <summary>The close's time, or null while the connection is open.</summary>
    public DateTimeOffset? Read() => Volatile.Read(ref ticks) is var value and not 0 ? new DateTimeOffset(value, TimeSpan.Zero) : null;

    /// <summary>Records now as the close's time.</summary>
    public void Stamp() => Volatile.Write(ref ticks, DateTime.UtcNow.Ticks);
}
