using Broker.Host.Logging;
using Microsoft.Extensions.Logging;
using Serilog.Core;
using Serilog.Events;
using Serilog.Extensions.Logging;

// The states are built to be passed, whatever the level.
#pragma warning disable CA1873

namespace Broker.Host.Tests.Logging;

/// <summary>
/// The host's loggers hand Serilog every line with a template as one state type (so Serilog's generic code is compiled
/// once), and Serilog makes the same events of them as of the lines' own states.
/// </summary>
public sealed class OneShapeLoggerTests
{
    private static readonly Action<ILogger, Exception?> NoValues =
        LoggerMessage.Define(LogLevel.Information, new EventId(7, "None"), "Broker is ready");

    private static readonly Action<ILogger, string, Exception?> OneValue =
        LoggerMessage.Define<string>(LogLevel.Warning, 8, "Store Directory: \"{Directory}\"");

    private static readonly Action<ILogger, string, int, Exception?> TwoValues =
        LoggerMessage.Define<string, int>(LogLevel.Error, 0, "Plugin {Id} has {Count} blocks");

    private static readonly Action<ILogger, object, ulong, double, Exception?> ThreeValues =
        LoggerMessage.Define<object, ulong, double>(LogLevel.Information, 9, "{@Shape} {Messages} in {Ms} ms");

    [Fact(Timeout = 10_000)]
    public async Task Lines_with_a_template_reach_Serilog_as_one_state_type()
    {
        var recorder = new RecordingLogger();
        var logger = new OneShapeLogger(recorder);
        NoValues(logger, null);
        OneValue(logger, "/tmp/js", null);
        TwoValues(logger, "Mqtt", 2, null);
        ThreeValues(logger, new { Arity = 3 }, 20_000UL, 7.5, null);

        Assert.Equal(4, recorder.States.Count);
        Assert.All(recorder.States, type => Assert.Equal(typeof(IReadOnlyList<KeyValuePair<string, object?>>), type));
        await Task.CompletedTask;
    }

    [Fact(Timeout = 10_000)]
    public async Task A_state_without_a_template_is_passed_as_it_is()
    {
        var recorder = new RecordingLogger();
        var logger = new OneShapeLogger(recorder);
        logger.Log(LogLevel.Information, 0, "plain", null, (s, _) => s);
        logger.Log(LogLevel.Information, 0, new List<KeyValuePair<string, object?>> { new("Key", 1) }, null, (_, _) => "list");

        Assert.Equal([typeof(string), typeof(List<KeyValuePair<string, object?>>)], recorder.States);
        await Task.CompletedTask;
    }

    [Fact(Timeout = 10_000)]
    public async Task Serilog_makes_the_same_events_as_from_the_lines_own_states()
    {
        var direct = Log(factory => factory);
        var oneShape = Log(factory => new OneShapeLoggerFactory(factory));

        Assert.Equal(direct.Count, oneShape.Count);
        for (var i = 0; i < direct.Count; i++)
        {
            Assert.Equal(direct[i].Level, oneShape[i].Level);
            Assert.Equal(direct[i].MessageTemplate.Text, oneShape[i].MessageTemplate.Text);
            Assert.Equal(direct[i].RenderMessage(), oneShape[i].RenderMessage());
            Assert.Equal(direct[i].Exception?.Message, oneShape[i].Exception?.Message);
            Assert.Equal(
                direct[i].Properties.Select(p => $"{p.Key}={p.Value}").Order(),
                oneShape[i].Properties.Select(p => $"{p.Key}={p.Value}").Order());
        }

        await Task.CompletedTask;
    }

    private static List<LogEvent> Log(Func<ILoggerFactory, ILoggerFactory> wrap)
    {
        var sink = new CollectingSink();
        using var root = new Serilog.LoggerConfiguration().MinimumLevel.Verbose().WriteTo.Sink(sink).CreateLogger();
        using var factory = wrap(new SerilogLoggerFactory(root, dispose: false));
        var logger = factory.CreateLogger("Broker.Test");
        var failure = new InvalidOperationException("disk");
        NoValues(logger, null);
        OneValue(logger, "/tmp/js", failure);
        TwoValues(logger, "Mqtt", 2, null);
        ThreeValues(logger, new { Arity = 3 }, 20_000UL, 7.5, null);
#pragma warning disable CA1848, CA2254 // The extension methods' own state (FormattedLogValues) is checked too.
        logger.LogInformation("Listening on {Host}:{Port}", "127.0.0.1", 4222);
#pragma warning restore CA1848, CA2254
        logger.Log(LogLevel.Debug, 0, "plain", null, (s, _) => s);
        return sink.Events;
    }

    private sealed class CollectingSink : ILogEventSink
    {
        public List<LogEvent> Events { get; } = [];

        public void Emit(LogEvent logEvent) => Events.Add(logEvent);
    }

    private sealed class RecordingLogger : ILogger
    {
        public List<Type> States { get; } = [];

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            States.Add(typeof(TState));
    }
}
