using System.Runtime.InteropServices;
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
internal sealed partial class HostSignals : IDisposable
{
    // The exit code of a forced exit.
    private const int ForcedExitCode = 1;

    // Linux's numbers; PosixSignal names only the signals every platform has, and takes raw numbers for the rest.
    private const int SigHup = 1;
    private const int SigInt = 2;
    private const int SigUsr1 = 10;
    private const int SigUsr2 = 12;
    private const int SigTerm = 15;

    // signal(2) dispositions.
    private const nint SigDfl = 0;
    private const nint SigIgn = 1;

    private readonly ILogger logger;
    // The signals not yet read, and the read waiting for one: a queue and a task rather than a Channel<HostSignal>, whose
    // instantiations over the enum were ~75 type loads of every start (docs/benchmarks.md, "start9"). Leaf lock.
    private readonly Queue<HostSignal> pending = new();
    private TaskCompletionSource<HostSignal>? reader;
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

    /// <summary>
    /// Takes back the signals the host handles that the process inherited as ignored, as nats-server (Go's
    /// signal.Notify) does. A shell runs <c>cmd &amp;</c> with SIGINT and SIGQUIT ignored when job control is off (any
    /// script), and <c>nohup</c> ignores SIGHUP; the .NET runtime respects an inherited SIG_IGN and never delivers
    /// such a signal, so a broker started from a script would not stop on SIGINT or <c>--signal quit</c>.
    /// </summary>
    /// <remarks>
    /// Call it first thing in Main: the runtime decides for SIGINT when it first sets up signal handling (the first
    /// use of the console does), and keeps that decision. A signal that arrives between this reset and the runtime's
    /// handler ends the process, as it would any process that had not ignored it.
    /// </remarks>
    public static void TakeIgnoredSignals()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        // struct sigaction starts with the handler on glibc and musl; 256 bytes hold the whole of it.
        var current = new byte[256];
        foreach (var signal in (ReadOnlySpan<int>)[SigInt, SigTerm, SigHup, SigUsr1, SigUsr2])
        {
            if (SigAction(signal, 0, current) == 0 && Handler(current) == SigIgn)
            {
                Signal(signal, SigDfl);
            }
        }
    }

    /// <summary>Waits for the next signal (one reader: the host's main loop).</summary>
    /// <returns>The signal, in the order they arrived.</returns>
    public Task<HostSignal> ReadAsync()
    {
        lock (pending)
        {
            if (pending.TryDequeue(out var signal))
            {
                return Task.FromResult(signal);
            }

            // Completed off the signal thread: the main loop's continuation never runs inside the signal handler.
            reader ??= new TaskCompletionSource<HostSignal>(TaskCreationOptions.RunContinuationsAsynchronously);
            return reader.Task;
        }
    }

    public void Dispose()
    {
        foreach (var registration in registrations)
        {
            registration.Dispose();
        }
    }

    private static nint Handler(byte[] action) =>
        IntPtr.Size == 8 ? (nint)BitConverter.ToInt64(action) : BitConverter.ToInt32(action);

    [LibraryImport("libc", EntryPoint = "sigaction", SetLastError = true)]
    private static partial int SigAction(int signal, nint action, [Out] byte[] oldAction);

    [LibraryImport("libc", EntryPoint = "signal", SetLastError = true)]
    private static partial nint Signal(int signal, nint handler);

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
        TaskCompletionSource<HostSignal>? waiting;
        lock (pending)
        {
            waiting = reader;
            reader = null;
            if (waiting is null)
            {
                pending.Enqueue(meaning);
            }
        }

        waiting?.SetResult(meaning);
    }
}
