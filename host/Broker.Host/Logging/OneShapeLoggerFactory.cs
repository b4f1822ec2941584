using Microsoft.Extensions.Logging;

namespace Broker.Host.Logging;

/// <summary>
/// Serilog's logger factory behind loggers that hand Serilog every log line's values as one state type. A log line's
/// state is a struct of its own shape (LoggerMessage's <c>LogValues</c> of each arity, the source generator's one struct
/// per method), and <see cref="ILogger.Log{TState}"/> is a generic virtual method no ReadyToRun image can hold: Serilog's
/// <c>Log</c> and its 4 KB <c>PrepareWrite</c> were JIT-compiled for every shape a start logs (0, 1, 2, 3 and 6 values
/// on a restart). Passed on as one <see cref="IReadOnlyList{T}"/>, they are compiled once; what stays per shape is
/// <see cref="OneShapeLogger.Log{TState}"/>, a few instructions (docs/benchmarks.md, "start7").
/// </summary>
/// <param name="inner">Serilog's factory; disposed with this one.</param>
internal sealed class OneShapeLoggerFactory(ILoggerFactory inner) : ILoggerFactory
{
    /// <inheritdoc/>
    public ILogger CreateLogger(string categoryName) => new OneShapeLogger(inner.CreateLogger(categoryName));

    /// <inheritdoc/>
    public void AddProvider(ILoggerProvider provider) => inner.AddProvider(provider);

    /// <inheritdoc/>
    public void Dispose() => inner.Dispose();
}

/// <summary>
/// A logger that passes a line's values on boxed as <see cref="IReadOnlyList{T}"/> when the state carries its message
/// template (<c>{OriginalFormat}</c>, last, as LoggerMessage's and the source generator's states do): Serilog then takes
/// the template and the values from the list, as it took them from the struct, and never calls the formatter. Any
/// other state is passed on as it is.
/// </summary>
/// <param name="inner">Serilog's logger.</param>
internal sealed class OneShapeLogger(ILogger inner) : ILogger
{
    private const string OriginalFormat = "{OriginalFormat}";

    // Serilog calls the formatter only for a state without a template, which is never passed as a list: this one is
    // here because the signature needs one. A LoggerMessage state formats its message in ToString, so it is right too.
    private static readonly Func<IReadOnlyList<KeyValuePair<string, object?>>, Exception?, string> FormatValues =
        static (values, _) => values.ToString() ?? "";

    /// <summary>The logger this one passes lines to.</summary>
    internal ILogger Inner => inner;

    /// <inheritdoc/>
    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => inner.BeginScope(state);

    /// <inheritdoc/>
    public bool IsEnabled(LogLevel logLevel) => inner.IsEnabled(logLevel);

    /// <inheritdoc/>
    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        // One box per line written (Serilog allocates its event and properties beside it); a disabled level costs
        // nothing here, as LoggerMessage's delegates check IsEnabled first.
        if (state is IReadOnlyList<KeyValuePair<string, object?>> { Count: > 0 } values && values[values.Count - 1].Key == OriginalFormat)
        {
            inner.Log(logLevel, eventId, values, exception, FormatValues);
        }
        else
        {
            inner.Log(logLevel, eventId, state, exception, formatter);
        }
    }
}
