using System.Runtime.InteropServices;
using System.Threading.Channels;
using Broker.Host.Logging;
using Microsoft.Extensions.Logging;

namespace Broker.Host.Hosting;

/// <summary>What a signal asks the running host to do.</summary>
internal enum HostSignal
{
    /// <summary>SIGINT, SIGTERM: stop gracefully.</summary>
    Stop,

    /// <summary>SIGHUP: reload the configuration.</summary>
    Reload,

    /// <summary>SIGUSR1: reopen the log file.</summary>
    Reopen,

    /// <summary>SIGUSR2: lame duck mode, then exit.</summary>
    LameDuck,
}

/// <summary>
/// The signals nats-server handles, queued for the host's main loop: SIGINT/SIGTERM stop (a second one exits the
/// process at once with code 1, for a stop that hangs), SIGHUP reloads, SIGUSR1 reopens the log file, SIGUSR2 enters
/// lame duck mode.
/// </summary>
internal sealed class HostSignals : IDisposable
{
    // The exit code of a forced exit.
    private const int ForcedExitCode = 1;

    // Linux's numbers; PosixSignal names only the signals every platform has, and takes raw numbers for the rest.
    private const int SigUsr1 = 10;
    private const int SigUsr2 = 12;

    private readonly ILogger logger;
    private readonly Channel<HostSignal> queue = Channel.CreateUnbounded<HostSignal>(new UnboundedChannelOptions { SingleReader = true });
    private readonly List<PosixSignalRegistration> registrations = [];
    private int stops;

    public HostSignals(ILogger logger)
    {
        this.logger = logger;
        Register(PosixSignal.SIGINT, "SIGINT", HostSignal.Stop);
        Register(PosixSignal.SIGTERM, "SIGTERM", HostSignal.Stop);
        Register(PosixSignal.SIGHUP, "SIGHUP", HostSignal.Reload);
        if (OperatingSystem.IsLinux())
        {
            Register((PosixSignal)SigUsr1, "SIGUSR1", HostSignal.Reopen);
            Register((PosixSignal)SigUsr2, "SIGUSR2", HostSignal.LameDuck);
        }
    }

    /// <summary>Waits for the next signal.</summary>
    /// <param name="cancellationToken">Stops waiting.</param>
    /// <returns>The signal.</returns>
    public ValueTask<HostSignal> ReadAsync(CancellationToken cancellationToken) => queue.Reader.ReadAsync(cancellationToken);

    public void Dispose()
    {
        foreach (var registration in registrations)
        {
            registration.Dispose();
        }
    }

    private void Register(PosixSignal signal, string name, HostSignal meaning) =>
        registrations.Add(PosixSignalRegistration.Create(signal, context => OnSignal(context, name, meaning)));

    private void OnSignal(PosixSignalContext context, string name, HostSignal meaning)
    {
        // Handled here: the runtime's default would end the process before the broker stops.
        context.Cancel = true;
        if (meaning == HostSignal.Stop && Interlocked.Increment(ref stops) > 1)
        {
            HostLog.ForcedExit(logger, name);
            Environment.Exit(ForcedExitCode);
        }

        HostLog.SignalReceived(logger, name);
        queue.Writer.TryWrite(meaning);
    }
}
