using System.Collections;

namespace Broker.Host;

/// <summary>What the host reads from and writes to outside its arguments, so tests can run it in-process.</summary>
/// <param name="BaseDirectory">The executable's folder: appsettings.json and the default plugins folder are there.</param>
/// <param name="Variables">Environment variables.</param>
/// <param name="Out">Standard output (<c>-v</c>, <c>-h</c>).</param>
/// <param name="Error">Standard error (configuration errors; the log, unless <c>-l</c> is given).</param>
internal sealed record HostEnvironment(string BaseDirectory, IDictionary Variables, TextWriter Out, TextWriter Error)
{
    /// <summary>The real process's environment.</summary>
    /// <returns>The environment.</returns>
    public static HostEnvironment FromProcess() =>
        new(AppContext.BaseDirectory, Environment.GetEnvironmentVariables(), Console.Out, Console.Error);
}
