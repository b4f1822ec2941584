using System.Globalization;
using Broker.Host.Configuration;
using Microsoft.Extensions.Logging;
using Serilog;
using Serilog.Core;
using Serilog.Events;
using Serilog.Extensions.Logging;
using Serilog.Sinks.SystemConsole.Themes;

namespace Broker.Host.Logging;

/// <summary>
/// The host's logging: Serilog behind Microsoft.Extensions.Logging (the broker and plugins log through
/// <see cref="Microsoft.Extensions.Logging.ILogger"/> only), in nats-server's line format
/// <c>[pid] 2006/01/02 15:04:05.000000 [INF] message</c>, to standard error (as nats-server) or to the <c>-l</c> file.
/// The level, the file and the timestamp can change while running (reload), and the file can be reopened after it
/// was rotated away (SIGUSR1, <c>--signal reopen</c>), as nats-server allows.
/// </summary>
internal sealed class HostLogging : IDisposable
{
    private readonly LoggingLevelSwitch level = new();
    private readonly SwitchableSink sink = new();
    private readonly Serilog.Core.Logger root;
    private string? logFile;
    private bool logTime;

    private HostLogging(BrokerHostOptions options)
    {
        root = new LoggerConfiguration()
            .MinimumLevel.ControlledBy(level)
            .Enrich.With<NatsLevelEnricher>()
            .WriteTo.Sink(sink)
            .CreateLogger();

        // Serilog decides the level and is the only provider, so the factory is Serilog's own: its loggers are
        // Serilog's, with no Microsoft.Extensions.Logging Logger in front passing everything through (filter at Trace)
        // and holding the scopes. Each log line shape (LoggerMessage's LogValues of one arity) is a generic
        // instantiation the JIT compiles at first use, through ILogger.Log<TState>, which no ReadyToRun image can hold:
        // without the pass-through logger there are about three such methods fewer per shape, a dozen of a restart's
        // (docs/benchmarks.md, "start6"). Scopes stay Serilog's (SerilogLoggerProvider's). In front of each, a logger
        // that hands Serilog every shape as one state type, so Serilog's generic code is compiled once, not per shape
        // (OneShapeLoggerFactory, "start7").
        Factory = new OneShapeLoggerFactory(new SerilogLoggerFactory(root, dispose: false));
        Apply(options);
    }

    /// <summary>The factory the broker and plugins log through.</summary>
    public ILoggerFactory Factory { get; }

    /// <summary>Creates the logging.</summary>
    /// <param name="options">Level switches, log file and timestamp.</param>
    /// <returns>The logging; disposing it flushes and closes the sinks.</returns>
    /// <exception cref="HostConfigurationException">The log file cannot be opened for writing.</exception>
    public static HostLogging Create(BrokerHostOptions options)
    {
        Validate(options);
        return new HostLogging(options);
    }

    /// <summary>Checks that <see cref="Apply"/> would succeed with these options (the log file can be written).</summary>
    /// <param name="options">The settings.</param>
    /// <exception cref="HostConfigurationException">The log file cannot be opened for writing.</exception>
    public static void Validate(BrokerHostOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        if (!string.IsNullOrEmpty(options.LogFile))
        {
            EnsureWritable(Path.GetFullPath(options.LogFile));
        }
    }

    /// <summary>Applies the level, file and timestamp settings; the sink is replaced only when the last two changed.</summary>
    /// <param name="options">The settings.</param>
    /// <exception cref="HostConfigurationException">A new log file cannot be opened for writing; nothing changed then.</exception>
    public void Apply(BrokerHostOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var file = string.IsNullOrEmpty(options.LogFile) ? null : Path.GetFullPath(options.LogFile);
        if (file != logFile || options.LogTime != logTime || !sink.HasTarget)
        {
            sink.Replace(CreateTarget(file, options.LogTime));
            logFile = file;
            logTime = options.LogTime;
        }

        level.MinimumLevel = options.Trace ? LogEventLevel.Verbose : options.Debug ? LogEventLevel.Debug : LogEventLevel.Information;
    }

    /// <summary>Closes and reopens the log file (after logrotate moved it); nothing to do when logging to standard error.</summary>
    /// <exception cref="HostConfigurationException">The file cannot be opened again.</exception>
    public void Reopen()
    {
        if (logFile is not null)
        {
            sink.Replace(CreateTarget(logFile, logTime));
        }
    }

    public void Dispose()
    {
        Factory.Dispose();
        root.Dispose();
        sink.Dispose();
    }

    // A logger per target, so its sink is closed and replaced as a whole.
    private static Serilog.Core.Logger CreateTarget(string? file, bool logTime)
    {
        var template = "[" + Environment.ProcessId.ToString(CultureInfo.InvariantCulture) + "] "
            + (logTime ? "{Timestamp:yyyy/MM/dd HH:mm:ss.ffffff} " : "")
            + "[{" + NatsLevelEnricher.PropertyName + "}] {Message:lj}{NewLine}{Exception}";
        var configuration = new LoggerConfiguration().MinimumLevel.Verbose();
        if (file is not null)
        {
            EnsureWritable(file);
            configuration.WriteTo.File(file, outputTemplate: template, formatProvider: CultureInfo.InvariantCulture);
        }
        else
        {
            configuration.WriteTo.Console(
                outputTemplate: template,
                formatProvider: CultureInfo.InvariantCulture,
                standardErrorFromLevel: LogEventLevel.Verbose,
                theme: ConsoleTheme.None);
        }

        return configuration.CreateLogger();
    }

    // The file sink reports failures only to Serilog's SelfLog; a log file that cannot be written must stop the host.
    private static void EnsureWritable(string path)
    {
        try
        {
            var directory = Path.GetDirectoryName(path);
            if (!string.IsNullOrEmpty(directory))
            {
                Directory.CreateDirectory(directory);
            }

            using var stream = new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or NotSupportedException)
        {
            throw new HostConfigurationException($"log file {path}: {ex.Message}", ex);
        }
    }

    // Forwards events to the current target; replacing it closes the old one after no event is being written to it.
    private sealed class SwitchableSink : ILogEventSink, IDisposable
    {
        private readonly Lock gate = new();
        private Serilog.Core.Logger? target;

        public bool HasTarget
        {
            get
            {
                lock (gate)
                {
                    return target is not null;
                }
            }
        }

        public void Emit(LogEvent logEvent)
        {
            lock (gate)
            {
                ((ILogEventSink?)target)?.Emit(logEvent);
            }
        }

        public void Replace(Serilog.Core.Logger? next)
        {
            Serilog.Core.Logger? previous;
            lock (gate)
            {
                previous = target;
                target = next;
            }

            previous?.Dispose();
        }

        public void Dispose() => Replace(null);
    }
}
