using System.Diagnostics;
using System.Text;

namespace Broker.TestKit;

/// <summary>
/// A program run by a test (node, gcc, a compiled C client): its output is collected line by line so a test can
/// wait for a "ready" line while it runs, every wait has a deadline, and disposing kills the whole process tree
/// if it is still running. Nothing here lets a hung program outlive its test.
/// </summary>
public sealed class ExternalProcess : IAsyncDisposable
{
    /// <summary>How long <see cref="RunAsync"/> lets a program run when the caller gives no timeout.</summary>
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(60);

    private readonly Process process;
    private readonly List<string> stdout = [];
    private readonly StringBuilder stderr = new();
    private readonly TaskCompletionSource outputClosed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource errorClosed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly string commandLine;
    private TaskCompletionSource lineArrived = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private ExternalProcess(Process process, string commandLine)
    {
        this.process = process;
        this.commandLine = commandLine;
    }

    /// <summary>The lines written to standard output so far.</summary>
    public bool HasExited => process.HasExited;

    public IReadOnlyList<string> OutputLines
    {
        get
        {
            lock (stdout)
            {
                return [.. stdout];
            }
        }
    }

    /// <summary>Everything written to standard error so far.</summary>
    public string ErrorText
    {
        get
        {
            lock (stderr)
            {
                return stderr.ToString();
            }
        }
    }

    /// <summary>The operating system's process id.</summary>
    public int Id => process.Id;

    /// <summary>
    /// Starts <paramref name="fileName"/> (looked up on PATH) with the arguments, without a shell; entries of
    /// <paramref name="environment"/> are set in (a null value removes) the environment it inherits.
    /// </summary>
    public static ExternalProcess Start(string fileName, IEnumerable<string> arguments, string? workingDirectory = null, IReadOnlyDictionary<string, string?>? environment = null)
    {
        var startInfo = new ProcessStartInfo(fileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory ?? string.Empty,
        };
        foreach (var argument in arguments)
        {
            startInfo.ArgumentList.Add(argument);
        }

        foreach (var (key, value) in environment ?? new Dictionary<string, string?>())
        {
            if (value is null)
            {
                startInfo.Environment.Remove(key);
            }
            else
            {
                startInfo.Environment[key] = value;
            }
        }

        var process = new Process { StartInfo = startInfo };
        var external = new ExternalProcess(process, fileName + " " + string.Join(' ', startInfo.ArgumentList));
        process.OutputDataReceived += (_, e) => external.OnOutput(e.Data);
        process.ErrorDataReceived += (_, e) => external.OnError(e.Data);
        if (!process.Start())
        {
            throw new InvalidOperationException("Could not start " + external.commandLine);
        }

        // Nothing is ever typed into these programs; closing stdin lets one that reads it see end of input.
        process.StandardInput.Close();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return external;
    }

    /// <summary>Runs a program to completion (or kills it at <paramref name="timeout"/>) and returns what it did.</summary>
    public static async Task<ProcessResult> RunAsync(string fileName, IEnumerable<string> arguments, TimeSpan? timeout = null, string? workingDirectory = null)
    {
        await using var external = Start(fileName, arguments, workingDirectory);
        return await external.WaitForExitAsync(timeout ?? DefaultTimeout).ConfigureAwait(false);
    }

    /// <summary>
    /// Waits for a line of standard output that satisfies <paramref name="predicate"/> (lines already printed count).
    /// Throws with everything printed so far when the program exits first or the timeout passes.
    /// </summary>
    public async Task<string> WaitForLineAsync(Func<string, bool> predicate, TimeSpan timeout)
    {
        ArgumentNullException.ThrowIfNull(predicate);
        var deadline = DateTime.UtcNow + timeout;
        var seen = 0;
        while (true)
        {
            Task arrived;
            lock (stdout)
            {
                for (; seen < stdout.Count; seen++)
                {
                    if (predicate(stdout[seen]))
                    {
                        return stdout[seen];
                    }
                }

                arrived = lineArrived.Task;
            }

            if (outputClosed.Task.IsCompleted)
            {
                throw new InvalidOperationException($"{commandLine} ended without the expected line.{Environment.NewLine}{Describe()}");
            }

            var remaining = deadline - DateTime.UtcNow;
            if (remaining <= TimeSpan.Zero)
            {
                throw new TimeoutException($"{commandLine} did not print the expected line within {timeout}.{Environment.NewLine}{Describe()}");
            }

            await Task.WhenAny(arrived, outputClosed.Task, Task.Delay(remaining)).ConfigureAwait(false);
        }
    }

    /// <summary>Waits for the program to exit; at <paramref name="timeout"/> kills it and reports a timeout.</summary>
    public async Task<ProcessResult> WaitForExitAsync(TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        var timedOut = false;
        try
        {
            await process.WaitForExitAsync(cts.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            timedOut = true;
            Kill();
            await process.WaitForExitAsync().ConfigureAwait(false);
        }

        // The exit can be seen before the last output lines are; both streams end soon after the process does.
        await Task.WhenAny(Task.WhenAll(outputClosed.Task, errorClosed.Task), Task.Delay(TimeSpan.FromSeconds(5))).ConfigureAwait(false);
        return new ProcessResult(commandLine, timedOut ? null : process.ExitCode, OutputLines, ErrorText);
    }

    public async ValueTask DisposeAsync()
    {
        Kill();
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            await process.WaitForExitAsync(cts.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // Killed but not yet reaped; the kernel finishes it, nothing more a test can do.
        }

        process.Dispose();
    }

    private string Describe() => new ProcessResult(commandLine, null, OutputLines, ErrorText).ToString();

    private void Kill()
    {
        try
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }
        }
        catch (InvalidOperationException)
        {
            // It exited between the check and the kill.
        }
    }

    private void OnOutput(string? line)
    {
        if (line is null)
        {
            outputClosed.TrySetResult();
            return;
        }

        TaskCompletionSource arrived;
        lock (stdout)
        {
            stdout.Add(line);
            arrived = lineArrived;
            lineArrived = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        arrived.TrySetResult();
    }

    private void OnError(string? line)
    {
        if (line is null)
        {
            errorClosed.TrySetResult();
            return;
        }

        lock (stderr)
        {
            stderr.AppendLine(line);
        }
    }
}

/// <summary>What an external program did: its exit code (null when it was killed at its timeout) and output.</summary>
public sealed record ProcessResult(string CommandLine, int? ExitCode, IReadOnlyList<string> OutputLines, string ErrorText)
{
    public bool TimedOut => ExitCode is null;

    /// <summary>Standard output as one string.</summary>
    public string Output => string.Join(Environment.NewLine, OutputLines);

    /// <summary>A readable account for assertion messages.</summary>
    public override string ToString() =>
        $"$ {CommandLine}{Environment.NewLine}exit: {(ExitCode?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "killed at timeout")}" +
        $"{Environment.NewLine}stdout:{Environment.NewLine}{Output}{Environment.NewLine}stderr:{Environment.NewLine}{ErrorText}";
}
