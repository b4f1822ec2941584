using System.Globalization;
using System.Runtime.InteropServices;
using Broker.Core;

namespace Broker.Compare.Servers;

/// <summary>
/// <c>Broker.Compare serve -a HOST -p PORT</c>: the broker core with default options in this process, until
/// SIGTERM, Ctrl+C or the end of standard input (the harness holds it open, so the server dies with the harness).
/// The fallback for measuring our broker while the host executable cannot serve.
/// </summary>
internal static class EmbeddedServer
{
    public static async Task<int> RunAsync(IReadOnlyList<string> args)
    {
        var options = new BrokerOptions { Host = "127.0.0.1", Port = 4222 };
        for (var i = 0; i + 1 < args.Count; i += 2)
        {
            switch (args[i])
            {
                case "-a":
                    options.Host = args[i + 1];
                    break;
                case "-p":
                    options.Port = int.Parse(args[i + 1], CultureInfo.InvariantCulture);
                    break;
                default:
                    await Console.Error.WriteLineAsync($"serve: unknown option {args[i]}").ConfigureAwait(false);
                    return 2;
            }
        }

        await using var server = new BrokerServer(options);
        await server.StartAsync().ConfigureAwait(false);
        Console.WriteLine($"serving {server.ClientUrl}");

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
        return 0;
    }
}
