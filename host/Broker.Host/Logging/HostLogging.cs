using System.Globalization;
using Broker.Host.Configuration;
using Microsoft.Extensions.Logging;
using Serilog;
using Serilog.Events;
using Serilog.Sinks.SystemConsole.Themes;

namespace Broker.Host.Logging;

/// <summary>
/// The host's logging: Serilog behind Microsoft.Extensions.Logging (the broker and plugins log through
/// <see cref="Microsoft.Extensions.Logging.ILogger"/> only), in nats-server's line format
/// <c>[pid] 2006/01/02 15:04:05.000000 [INF] message</c>, to standard error (as nats-server) or to the <c>-l</c> file.
/// </summary>
internal static class HostLogging
{
    /// <summary>Creates the logger factory; disposing it flushes and closes the sinks.</summary>
    /// <param name="options">Level switches and the log file.</param>
    /// <returns>The factory.</returns>
    /// <exception cref="HostConfigurationException">The log file cannot be opened for writing.</exception>
    public static ILoggerFactory Create(BrokerHostOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var level = options.Trace ? LogEventLevel.Verbose : options.Debug ? LogEventLevel.Debug : LogEventLevel.Information;
        var template = "[" + Environment.ProcessId.ToString(CultureInfo.InvariantCulture) + "] "
            + "{Timestamp:yyyy/MM/dd HH:mm:ss.ffffff} [{" + NatsLevelEnricher.PropertyName + "}] {Message:lj}{NewLine}{Exception}";
        var configuration = new LoggerConfiguration()
            .MinimumLevel.Is(level)
            .Enrich.With<NatsLevelEnricher>();
        if (!string.IsNullOrEmpty(options.LogFile))
        {
            var path = Path.GetFullPath(options.LogFile);
            EnsureWritable(path);
            configuration.WriteTo.File(path, outputTemplate: template, formatProvider: CultureInfo.InvariantCulture);
        }
        else
        {
            configuration.WriteTo.Console(
                outputTemplate: template,
                formatProvider: CultureInfo.InvariantCulture,
                standardErrorFromLevel: LogEventLevel.Verbose,
                theme: ConsoleTheme.None);
        }

        var serilog = configuration.CreateLogger();

        // Serilog decides the level; Microsoft.Extensions.Logging passes everything through to it.
        return LoggerFactory.Create(builder => builder.SetMinimumLevel(LogLevel.Trace).AddSerilog(serilog, dispose: true));
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
}
