using System.Runtime.InteropServices;

namespace Broker.Host.Hosting;

/// <summary>
/// <c>-sl</c> / <c>--signal &lt;command&gt;[=&lt;pid&gt;]</c>: sends a running broker the signal nats-server maps the
/// command to. The pid is a number or a pid file; without one, the configured pid file (<c>-P</c>, <c>pid_file</c>)
/// names the broker.
/// </summary>
/// <remarks>
/// <c>stop</c> sends SIGTERM (a graceful stop) where nats-server sends SIGKILL, which would leave the ports file and
/// the pid file behind. nats-server looks a missing pid up with <c>pgrep nats-server</c>; the broker runs as
/// <c>dotnet</c>, so it asks for a pid or a pid file instead.
/// </remarks>
internal static partial class SignalCommand
{
    // Linux's signal numbers.
    private const int SigHup = 1;
    private const int SigInt = 2;
    private const int SigUsr1 = 10;
    private const int SigUsr2 = 12;
    private const int SigTerm = 15;

    /// <summary>Sends the signal.</summary>
    /// <param name="value">The flag's value: <c>reload</c>, <c>ldm=1234</c>, <c>stop=/run/broker.pid</c>, ...</param>
    /// <param name="pidFile">The configured pid file, used when the value names no pid.</param>
    /// <returns><see langword="null"/> when the signal was sent, else why not (one line).</returns>
    public static string? Send(string value, string? pidFile)
    {
        ArgumentNullException.ThrowIfNull(value);
        var parts = value.Split('=');
        if (parts.Length > 2)
        {
            return $"invalid signal parameters: [{string.Join(' ', parts[2..])}]";
        }

        var command = parts[0];
        if (SignalOf(command) is not { } signal)
        {
            return $"unknown signal \"{command}\"";
        }

        string pidText;
        if (parts.Length == 2)
        {
            // As nats-server's maybeReadPidFile: a readable file holds the pid, anything else is the pid itself.
            pidText = File.Exists(parts[1]) ? ReadFile(parts[1]) ?? parts[1] : parts[1];
        }
        else if (!string.IsNullOrEmpty(pidFile))
        {
            if (ReadFile(pidFile) is not { } text)
            {
                return $"no broker process found: cannot read pid file {pidFile}";
            }

            pidText = text;
        }
        else
        {
            return "no pid given: use --signal <signal>=<pid or pid file>, or name the pid file with -P or pid_file";
        }

        if (PidFile.Parse(pidText) is not { } pid)
        {
            return $"invalid pid: {pidText.Trim()}";
        }

        if (!OperatingSystem.IsLinux())
        {
            return "signals are not supported on this platform";
        }

        return Kill(pid, signal) == 0 ? null : $"signal \"{command}\" {pid}: {Marshal.GetLastPInvokeErrorMessage()}";
    }

    private static int? SignalOf(string command) => command switch
    {
        "reload" => SigHup,
        "ldm" => SigUsr2,
        "reopen" => SigUsr1,
        "quit" => SigInt,
        "stop" or "term" => SigTerm,
        _ => null,
    };

    private static string? ReadFile(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
