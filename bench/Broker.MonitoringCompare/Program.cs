namespace Broker.MonitoringCompare;

/// <summary>
/// <c>dotnet run -c Release --project bench/Broker.MonitoringCompare [-- --startups 5 --seconds 5 --connections 4 --rounds 3]</c>
/// prints the comparison table. Every server runs in a child process of its own (<c>--serve own|kestrel|none</c>), so
/// start-up time, working set and allocated bytes are the server's alone, not the load generator's.
/// </summary>
public static class Program
{
    public static async Task<int> Main(string[] args)
    {
        ArgumentNullException.ThrowIfNull(args);
        var serve = Value(args, "--serve");
        if (serve is not null)
        {
            return await ServerProcess.RunAsync(serve).ConfigureAwait(false);
        }

        var options = new CompareOptions(
            Startups: int.Parse(Value(args, "--startups") ?? "5", System.Globalization.CultureInfo.InvariantCulture),
            Seconds: double.Parse(Value(args, "--seconds") ?? "5", System.Globalization.CultureInfo.InvariantCulture),
            Connections: int.Parse(Value(args, "--connections") ?? "4", System.Globalization.CultureInfo.InvariantCulture),
            Rounds: int.Parse(Value(args, "--rounds") ?? "3", System.Globalization.CultureInfo.InvariantCulture));
        await new CompareRunner(options, Console.Out).RunAsync().ConfigureAwait(false);
        return 0;
    }

    private static string? Value(string[] args, string name)
    {
        var index = Array.IndexOf(args, name);
        return index >= 0 && index + 1 < args.Length ? args[index + 1] : null;
    }
}

/// <summary>
/// How many cold starts per server, how long each load phase lasts, with how many keep-alive connections, and how many
/// rounds of load phases (servers alternating).
/// </summary>
internal sealed record CompareOptions(int Startups, double Seconds, int Connections, int Rounds);
