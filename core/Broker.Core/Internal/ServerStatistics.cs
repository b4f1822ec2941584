namespace Broker.Core.Internal;

/// <summary>Server-wide counters, added to once per producer batch rather than per message.</summary>
internal sealed class ServerStatistics
{
    public long InMessages;
    public long InBytes;
    public long OutMessages;
    public long OutBytes;
    public long TotalConnections;
    public long SlowConsumers;
    public long StaleConnections;

    public void AddIn(long messages, long bytes)
    {
        Interlocked.Add(ref InMessages, messages);
        Interlocked.Add(ref InBytes, bytes);
    }

    public void AddOut(long messages, long bytes)
    {
        Interlocked.Add(ref OutMessages, messages);
        Interlocked.Add(ref OutBytes, bytes);
    }
}
