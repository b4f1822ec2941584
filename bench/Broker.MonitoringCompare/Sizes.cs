namespace Broker.MonitoringCompare;

/// <summary>What must ship: the broker's core assembly, and the ASP.NET Core shared framework Kestrel comes in.</summary>
internal static class Sizes
{
    /// <summary>The folder of the installed ASP.NET Core shared framework this process runs on.</summary>
    public static string AspNetCoreFrameworkDirectory { get; } =
        Path.GetDirectoryName(typeof(Microsoft.AspNetCore.Builder.WebApplication).Assembly.Location)!;

    public static long BrokerCoreBytes => new FileInfo(typeof(Broker.Core.BrokerServer).Assembly.Location).Length;

    /// <summary>Every file of the shared framework (what a framework-dependent deployment needs installed).</summary>
    public static (int Files, long Bytes) AspNetCoreFramework()
    {
        var files = new DirectoryInfo(AspNetCoreFrameworkDirectory).GetFiles();
        return (files.Length, files.Sum(f => f.Length));
    }
}
