namespace Broker.Host;

internal static class Program
{
    private static Task<int> Main(string[] args) => BrokerHost.RunAsync(args, HostEnvironment.FromProcess());
}
