using System.Globalization;
using Broker.TestKit;

namespace Broker.Host.Tests.Process;

/// <summary>
/// The host started the way a script starts a server, <c>cmd &amp;</c> under a shell without job control: the shell
/// starts the command with SIGINT (and SIGQUIT) ignored, which the .NET runtime would respect. nats-server stops on
/// SIGINT and <c>--signal quit</c> all the same, and so must the host.
/// </summary>
public sealed class BackgroundStartTests
{
    private static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(10);

    // A second background command beside the host, which shows what the shell did to the dispositions.
    private const string Script = """
        "$@" &
        echo "host pid $!"
        sleep 120 &
        echo "witness pid $!"
        wait
        """;

    [Theory(Timeout = 60_000)]
    [InlineData("SIGINT")]
    [InlineData("--signal quit")]
    public async Task Host_started_in_the_background_of_a_script_stops_on_sigint(string how)
    {
        var dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet";
        await using var shell = HostProcess.Start("/bin/sh", ["-c", Script, "sh", dotnet, HostProcess.HostAssembly, "-a", "127.0.0.1", "-p", "-1"]);
        var hostPid = Pid(await shell.WaitForLineAsync("host pid ", HostProcess.StartTimeout));
        var witnessPid = Pid(await shell.WaitForLineAsync("witness pid ", HostProcess.StartTimeout));
        await shell.WaitForLineAsync("Broker is ready", HostProcess.StartTimeout);

        // The witness shows the situation is the real one: the shell started its background commands with SIGINT ignored.
        Assert.True(IgnoresSigint(witnessPid), "the shell did not ignore SIGINT for its background commands");

        await using var client = await RawClient.ConnectAsync(shell.EndPoint("client"));
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        var started = DateTime.UtcNow;
        if (how == "SIGINT")
        {
            await KillAsync("INT", hostPid);
        }
        else
        {
            await using var signal = HostProcess.Start(["--signal", "quit=" + hostPid.ToString(CultureInfo.InvariantCulture)]);
            Assert.Equal(0, await signal.WaitForExitAsync(StopTimeout));
        }

        await shell.WaitForLineAsync("[INF] Server is stopped", StopTimeout);
        Assert.Contains(shell.Lines, l => l.Contains("[INF] Trapped \"SIGINT\" signal", StringComparison.Ordinal));
        Assert.True(await Eventually.TrueAsync(() => !File.Exists($"/proc/{hostPid}/status") || IsZombie(hostPid), StopTimeout), "the host process is still running");
        Assert.True(DateTime.UtcNow - started < StopTimeout);
        await client.ExpectClosedAsync();
        await KillAsync("TERM", witnessPid);
        Assert.Equal(0, await shell.WaitForExitAsync(StopTimeout));
    }

    private static int Pid(string line) => int.Parse(line[(line.LastIndexOf(' ') + 1)..], CultureInfo.InvariantCulture);

    // SigIgn in /proc/<pid>/status is a hexadecimal mask with bit (n - 1) set for an ignored signal n; SIGINT is 2.
    private static bool IgnoresSigint(int pid)
    {
        var line = File.ReadAllLines($"/proc/{pid}/status").Single(l => l.StartsWith("SigIgn:", StringComparison.Ordinal));
        return (ulong.Parse(line["SigIgn:".Length..].Trim(), NumberStyles.HexNumber, CultureInfo.InvariantCulture) & 0b10) != 0;
    }

    private static bool IsZombie(int pid)
    {
        try
        {
            return File.ReadAllLines($"/proc/{pid}/status").Any(l => l.StartsWith("State:", StringComparison.Ordinal) && l.Contains('Z', StringComparison.Ordinal));
        }
        catch (IOException)
        {
            return true;
        }
    }

    private static async Task KillAsync(string signal, int pid)
    {
        using var kill = System.Diagnostics.Process.Start("kill", ["-s", signal, pid.ToString(CultureInfo.InvariantCulture)]);
        await kill.WaitForExitAsync();
        Assert.Equal(0, kill.ExitCode);
    }
}
