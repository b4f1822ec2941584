using System.Diagnostics;
using System.Globalization;

namespace Broker.MonitoringCompare;

/// <summary>The parent's handle on a <see cref="ServerProcess"/>: starts it, reads its READY line, sends commands.</summary>
internal sealed class ChildServer : IDisposable
{
    private static readonly TimeSpan ReplyTimeout = TimeSpan.FromSeconds(120);

    private readonly Process process;

    private ChildServer(Process process, string kind)
    {
        this.process = process;
        Kind = kind;
    }

    public string Kind { get; }

    public int Port { get; private set; }

    /// <summary>From the process start to <c>Main</c> (runtime start-up), as the child measured it.</summary>
    public double ProcessToMainMs { get; private set; }

    /// <summary>From <c>Main</c> to the server listening.</summary>
    public double ListeningMs { get; private set; }

    /// <summary>From <c>Main</c> to the first 200 of <c>GET /varz</c>.</summary>
    public double FirstOkMs { get; private set; }

    /// <summary>From <see cref="Process.Start()"/> in the parent to the READY line (wall clock, the operator's view).</summary>
    public double WallMs { get; private set; }

    public long WorkingSetAtStart { get; private set; }

    public long ManagedHeapAtStart { get; private set; }

    public static ChildServer Start(string kind)
    {
        var self = Environment.ProcessPath!;
        var info = Path.GetFileNameWithoutExtension(self) == "dotnet"
            ? new ProcessStartInfo(self) { ArgumentList = { typeof(Program).Assembly.Location } }
            : new ProcessStartInfo(self);
        info.ArgumentList.Add("--serve");
        info.ArgumentList.Add(kind);
        info.RedirectStandardInput = true;
        info.RedirectStandardOutput = true;
        info.UseShellExecute = false;
        var wall = Stopwatch.StartNew();
        var child = new ChildServer(Process.Start(info) ?? throw new InvalidOperationException("no child process"), kind);
        string[] ready;
        do
        {
            // Anything a server prints before it is ready is not for us.
            ready = child.ReadLine().Split(' ');
        }
        while (ready[0] != "READY" && ready[0] != "Unhandled");
        child.WallMs = wall.Elapsed.TotalMilliseconds;
        if (ready[0] != "READY")
        {
            throw new InvalidOperationException($"{kind}: {string.Join(' ', ready)}");
        }

        child.Port = int.Parse(ready[1], CultureInfo.InvariantCulture);
        child.ProcessToMainMs = double.Parse(ready[2], CultureInfo.InvariantCulture);
        child.ListeningMs = double.Parse(ready[3], CultureInfo.InvariantCulture);
        child.FirstOkMs = double.Parse(ready[4], CultureInfo.InvariantCulture);
        child.WorkingSetAtStart = long.Parse(ready[5], CultureInfo.InvariantCulture);
        child.ManagedHeapAtStart = long.Parse(ready[6], CultureInfo.InvariantCulture);
        return child;
    }

    public string Command(string command)
    {
        process.StandardInput.WriteLine(command);
        process.StandardInput.Flush();
        return ReadLine();
    }

    public long CommandNumber(string command) => long.Parse(Command(command).Split(' ')[0], CultureInfo.InvariantCulture);

    public void Dispose()
    {
        if (!process.HasExited)
        {
            process.StandardInput.WriteLine("EXIT");
            process.StandardInput.Flush();
            if (!process.WaitForExit(TimeSpan.FromSeconds(30)))
            {
                process.Kill();
            }
        }

        process.Dispose();
    }

    private string ReadLine()
    {
        var line = process.StandardOutput.ReadLineAsync();
        if (!line.Wait(ReplyTimeout) || line.Result is null)
        {
            throw new InvalidOperationException($"{Kind}: no answer from the child process");
        }

        return line.Result;
    }
}
