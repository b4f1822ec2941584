using Microsoft.Extensions.Logging;

namespace Broker.Core.Tests.Auth;

/// <summary>A clock the test moves by hand (timestamps in ticks of 100 ns).</summary>
internal sealed class ManualTimeProvider : TimeProvider
{
    private long timestamp = 1_000_000;

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public override long GetTimestamp() => Interlocked.Read(ref timestamp);

    public void Advance(TimeSpan by) => Interlocked.Add(ref timestamp, by.Ticks);
}

/// <summary>Records log entries.</summary>
internal sealed class RecordingLogger : ILogger
{
    public List<(LogLevel Level, EventId Id, string Message)> Entries { get; } = [];

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => true;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        lock (Entries)
        {
            Entries.Add((logLevel, eventId, formatter(state, exception)));
        }
    }
}
