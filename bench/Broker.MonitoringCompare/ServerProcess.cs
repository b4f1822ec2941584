using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Broker.MonitoringCompare;

/// <summary>
/// A child process serving one kind of monitor: <c>own</c> (the broker's HTTP server), <c>kestrel</c> (the same
/// endpoints behind Kestrel) or <c>none</c> (the broker without monitoring, the baseline start-up). It times its own
/// start-up to the first 200 of <c>GET /varz</c> (a raw socket request, so no HTTP client is loaded), prints
/// <c>READY</c>, then answers the parent's commands on stdin: <c>ALLOC</c>, <c>WS</c>, <c>LOADED</c>, <c>EXIT</c>.
/// </summary>
internal static class ServerProcess
{
    public static async Task<int> RunAsync(string kind)
    {
        var sinceMain = Stopwatch.StartNew();
        using var self = Process.GetCurrentProcess();
        var processToMain = DateTime.Now - self.StartTime;
        await using IMonitorServer server = kind switch
        {
            "own" => await OwnMonitor.StartAsync().ConfigureAwait(false),
            "kestrel" => await KestrelMonitor.StartAsync().ConfigureAwait(false),
            "none" => await OwnMonitor.StartAsync(monitoring: false).ConfigureAwait(false),
            _ => throw new ArgumentException($"unknown server kind '{kind}' (own, kestrel, none)", nameof(kind)),
        };
        var listening = sinceMain.Elapsed;
        if (server.EndPoint is { } endPoint)
        {
            await ExpectOkAsync(endPoint, "/varz").ConfigureAwait(false);
        }

        var firstOk = sinceMain.Elapsed;
        Console.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"READY {server.EndPoint?.Port ?? 0} {processToMain.TotalMilliseconds:0.0} {listening.TotalMilliseconds:0.0} {firstOk.TotalMilliseconds:0.0} {Environment.WorkingSet} {GC.GetTotalMemory(false)}"));
        while (Console.ReadLine() is { } command)
        {
            switch (command)
            {
                case "ALLOC":
                    Console.WriteLine(GC.GetTotalAllocatedBytes(precise: true).ToString(CultureInfo.InvariantCulture));
                    break;
                case "WS":
                    Console.WriteLine(Environment.WorkingSet.ToString(CultureInfo.InvariantCulture));
                    break;
                case "LOADED":
                    var (count, bytes) = LoadedFrameworkAssemblies();
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{count} {bytes}"));
                    break;
                case "EXIT":
                    return 0;
                default:
                    Console.WriteLine("?");
                    break;
            }
        }

        return 0;
    }

    /// <summary>The ASP.NET Core shared framework's assemblies this process has loaded: what Kestrel needs at run time.</summary>
    private static (int Count, long Bytes) LoadedFrameworkAssemblies()
    {
        var directory = Sizes.AspNetCoreFrameworkDirectory;
        var loaded = AppDomain.CurrentDomain.GetAssemblies()
            .Where(a => !a.IsDynamic && a.Location.Length > 0 && string.Equals(Path.GetDirectoryName(a.Location), directory, StringComparison.Ordinal))
            .Select(a => new FileInfo(a.Location).Length)
            .ToList();
        return (loaded.Count, loaded.Sum());
    }

    private static async Task ExpectOkAsync(IPEndPoint endPoint, string path)
    {
        using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(endPoint).ConfigureAwait(false);
        await socket.SendAsync(Encoding.ASCII.GetBytes($"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")).ConfigureAwait(false);
        var buffer = new byte[64];
        var read = 0;
        while (read < 12)
        {
            var count = await socket.ReceiveAsync(buffer.AsMemory(read)).ConfigureAwait(false);
            if (count == 0)
            {
                break;
            }

            read += count;
        }

        var status = Encoding.ASCII.GetString(buffer, 0, read);
        if (!status.StartsWith("HTTP/1.1 200", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"GET {path}: '{status}'");
        }
    }
}
