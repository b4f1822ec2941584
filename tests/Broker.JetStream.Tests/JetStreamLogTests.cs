using Broker.JetStream.Internal;
using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Tests;

/// <summary>
/// Log lines whose values are passed boxed to spare the JIT the logging framework's generic code over value types
/// (<c>JetStreamLog.Recovered</c>; docs/benchmarks.md, "restart3"): the message, the event and the properties' values
/// and types are what a typed log method gave.
/// </summary>
public sealed class JetStreamLogTests
{
    [Fact]
    public void Recovered_writes_its_counts_as_numbers()
    {
        var logger = new CapturingLogger();

        JetStreamLog.Recovered(logger, 2, 7, "file");

        Assert.Equal(1006, logger.EventId.Id);
        Assert.Equal(LogLevel.Information, logger.Level);
        Assert.Equal("Restored 2 stream(s) and 7 consumer(s) of storage type file", logger.Message);
        Assert.Equal(
            [
                new("Streams", 2),
                new("Consumers", 7),
                new("Type", "file"),
                new("{OriginalFormat}", "Restored {Streams} stream(s) and {Consumers} consumer(s) of storage type {Type}"),
            ],
            logger.Properties);
    }

    private sealed class CapturingLogger : ILogger
    {
        public EventId EventId { get; private set; }

        public LogLevel Level { get; private set; }

        public string Message { get; private set; } = "";

        public List<KeyValuePair<string, object?>> Properties { get; } = [];

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            EventId = eventId;
            Level = logLevel;
            Message = formatter(state, exception);
            Properties.AddRange((IEnumerable<KeyValuePair<string, object?>>)state!);
        }
    }
}
