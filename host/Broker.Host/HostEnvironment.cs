using System.Collections;

namespace Broker.Host;

/// <summary>What the host reads from and writes to outside its arguments, so tests can run it in-process.</summary>
/// <param name="BaseDirectory">The executable's folder: appsettings.json and the default plugins folder are there.</param>
/// <param name="Variables">Environment variables.</param>
/// <param name="Out">Standard output (<c>-v</c>, <c>-h</c>).</param>
/// <param name="Error">Standard error (configuration errors; the log, unless <c>-l</c> is given).</param>
/// <param name="StartedAs">The name the process was started as (<see cref="Hosting.ProcessName.Launcher"/>), <c>broker</c> when started as <c>dotnet Broker.Host.dll</c>.</param>
internal sealed record HostEnvironment(string BaseDirectory, IDictionary Variables, TextWriter Out, TextWriter Error, string StartedAs = "broker")
{
    /// <summary>
    /// The program's name in usage and error lines, as nats-server names itself after argv[0]: a launcher's name in
    /// <c>BROKER_EXECUTABLENAME</c> (scripts/nats-server sets it), else the name the process was started as
    /// (<c>broker-server</c> for the .NET tool, <c>nats-server</c> for a link of that name, <c>broker</c> through
    /// <c>dotnet Broker.Host.dll</c>).
    /// </summary>
    public string ProgramName => Variables[ExecutableNameVariable] is string { Length: > 0 } name ? name : StartedAs;

    // The environment form of Broker:ExecutableName.
    private const string ExecutableNameVariable = "BROKER_EXECUTABLENAME";

    /// <summary>The real process's environment.</summary>
    /// <returns>The environment.</returns>
    public static HostEnvironment FromProcess() =>
        new(AppContext.BaseDirectory, Environment.GetEnvironmentVariables(), Console.Out, Console.Error, Hosting.ProcessName.Launcher() ?? "broker");
}
