using System.Globalization;
using System.Runtime.InteropServices;
using Broker.Core;

namespace Broker.Compare.Servers;

/// <summary>
/// <c>Broker.Compare serve -a HOST -p PORT [--ports_file_dir DIR]</c>: the broker core with default options in this
/// process (PORT -1: a random port, as nats-server; DIR: where to write nats-server's ports file), until
/// SIGTERM, Ctrl+C or the end of standard input (the harness holds it open, so the server dies with the harness).
/// The fallback for measuring our broker while the host executable cannot serve.
/// </summary>
internal static class EmbeddedServer
{
    public static async Task<int> RunAsync(IReadOnlyList<string> args)
    {
        var options = new BrokerOptions { Host = "127.0.0.1", Port = 4222 };
        string? portsFileDirectory = null;
        for (var i = 0; i + 1 < args.Count; i += 2)
        {
            switch (args[i])
            {
                case "-a":
                    options.Host = args[i + 1];
                    break;
                case "-p":
                    // nats-server's random port is -1; BrokerOptions calls it 0.
                    options.Port = Math.Max(0, int.Parse(args[i + 1], CultureInfo.InvariantCulture));
                    break;
                case "--ports_file_dir":
                    portsFileDirectory = args[i + 1];
                    break;
                default:
                    await Console.Error.WriteLineAsync($"serve: unknown option {args[i]}").ConfigureAwait(false);
                    return 2;
            }
        }

        await using var server = new BrokerServer(options);
        await server.StartAsync().ConfigureAwait(false);
        Console.WriteLine($"serving {server.ClientUrl}");
        var portsFile = portsFileDirectory is null ? null : WritePortsFile(portsFileDirectory, server.ClientUrl);

        using var stop = new CancellationTokenSource();
        using var sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
        {
            context.Cancel = true;
            stop.Cancel();
        });
        Console.CancelKeyPress += (_, e) =>
        {
            e.Cancel = true;
            stop.Cancel();
        };
        var stdinClosed = Task.Run(() => Console.In.ReadToEnd(), CancellationToken.None);
        await Task.WhenAny(stdinClosed, Task.Delay(Timeout.Infinite, stop.Token)).ConfigureAwait(false);
        await server.StopAsync(CancellationToken.None).ConfigureAwait(false);
        if (portsFile is not null)
        {
            File.Delete(portsFile);
        }

        return 0;
    }

    /// <summary>nats-server's ports file with the client URL alone, written aside and renamed so it appears whole.</summary>
    private static string WritePortsFile(string directory, string clientUrl)
    {
        var path = Path.Combine(directory, $"Broker.Compare_{Environment.ProcessId.ToString(CultureInfo.InvariantCulture)}.ports");
        File.WriteAllText(path + ".tmp", System.Text.Json.JsonSerializer.Serialize(new Dictionary<string, string[]> { ["nats"] = [clientUrl] }));
        File.Move(path + ".tmp", path, overwrite: true);
        return path;
    }
}
