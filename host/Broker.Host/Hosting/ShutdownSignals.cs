using System.Runtime.InteropServices;
using Broker.Host.Logging;
using Microsoft.Extensions.Logging;

namespace Broker.Host.Hosting;

/// <summary>
/// SIGINT and SIGTERM: the first asks for a graceful stop (<see cref="Stopping"/> is cancelled), the second exits
/// the process at once with code 1, for a stop that hangs.
/// </summary>
internal sealed class ShutdownSignals : IDisposable
{
    // The exit code of a forced exit.
    private const int ForcedExitCode = 1;

    private readonly ILogger logger;
    private readonly CancellationTokenSource stopping = new();
    private readonly PosixSignalRegistration interrupt;
    private readonly PosixSignalRegistration terminate;
    private int received;

    public ShutdownSignals(ILogger logger)
    {
        this.logger = logger;
        interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal);
        terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal);
    }

    /// <summary>Cancelled when the first signal arrives.</summary>
    public CancellationToken Stopping => stopping.Token;

    /// <summary>Completes when the first signal arrives.</summary>
    /// <returns>A task that completes on the first signal.</returns>
    public Task WaitAsync() => Task.Delay(Timeout.Infinite, stopping.Token).ContinueWith(static _ => { }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);

    public void Dispose()
    {
        interrupt.Dispose();
        terminate.Dispose();
        stopping.Dispose();
    }

    private void OnSignal(PosixSignalContext context)
    {
        // Handled here: the runtime's default would end the process before the broker stops.
        context.Cancel = true;
        if (Interlocked.Increment(ref received) == 1)
        {
            HostLog.SignalReceived(logger, context.Signal.ToString());
            stopping.Cancel();
            return;
        }

        HostLog.ForcedExit(logger, context.Signal.ToString());
        Environment.Exit(ForcedExitCode);
    }
}
