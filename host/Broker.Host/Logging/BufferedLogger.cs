using Microsoft.Extensions.Logging;

namespace Broker.Host.Logging;

/// <summary>
/// Keeps log entries until the real logger exists, then writes them to it with their levels, event ids and structured
/// properties. The plugin catalog looks at the plugins folder before the configuration file is read (the file's
/// plugin blocks depend on which plugins are there), which is before logging is configured (the file sets the log
/// file and level).
/// </summary>
internal sealed class BufferedLogger : ILogger
{
    private readonly List<Action<ILogger>> entries = [];

    /// <summary>Whether anything was logged at Error level or above.</summary>
    public bool HasErrors { get; private set; }

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    // Everything is kept; the real logger filters by level when the entries are replayed.
    public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        HasErrors |= logLevel >= LogLevel.Error;
        lock (entries)
        {
            entries.Add(logger => logger.Log(logLevel, eventId, state, exception, formatter));
        }
    }

    /// <summary>Writes the kept entries to <paramref name="logger"/>, in order, and forgets them.</summary>
    /// <param name="logger">The real logger.</param>
    public void ReplayTo(ILogger logger)
    {
        Action<ILogger>[] kept;
        lock (entries)
        {
            kept = [.. entries];
            entries.Clear();
        }

        foreach (var entry in kept)
        {
            entry(logger);
        }
    }
}
