using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace Broker.TestKit;

/// <summary>
/// Collects what a broker logs during a test. Errors fail the test (see <see cref="TestBroker"/>) unless the test
/// said it expects them, the way MQTTnet's test environment fails on logged errors.
/// </summary>
public sealed class TestLogSink : ILoggerProvider
{
    private readonly ConcurrentQueue<LogEntry> entries = new();
    private readonly Action<string>? echo;

    public TestLogSink(Action<string>? echo = null)
    {
        this.echo = echo;
    }

    public IReadOnlyCollection<LogEntry> Entries => entries;

    public IEnumerable<LogEntry> Errors => entries.Where(e => e.Level >= LogLevel.Error);

    public ILogger CreateLogger(string categoryName) => new SinkLogger(this, categoryName);

    public void Dispose()
    {
    }

    public bool Contains(string text) => entries.Any(e => e.Message.Contains(text, StringComparison.Ordinal));

    private void Add(LogEntry entry)
    {
        entries.Enqueue(entry);
        echo?.Invoke(entry.ToString());
    }

    public sealed record LogEntry(LogLevel Level, string Category, string Message, Exception? Exception)
    {
        public override string ToString() => $"[{Level}] {Category}: {Message}{(Exception is null ? "" : Environment.NewLine + Exception)}";
    }

    private sealed class SinkLogger(TestLogSink sink, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Debug;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
            => sink.Add(new LogEntry(logLevel, category, formatter(state, exception), exception));
    }
}
