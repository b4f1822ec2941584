namespace Broker.Interop.Tests;

/// <summary>
/// Runs the nats.js scenario scripts of <c>tests/interop/js</c> with node: <c>node script.mjs url [args]</c>.
/// Their packages come from <c>npm ci</c>, which scripts/test.sh runs when node_modules is missing.
/// </summary>
internal static class NodeScripts
{
    /// <summary>Longer than a script's own 20 s deadline, so the script reports its failure itself.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(45);

    public static string Directory { get; } = RepositoryPaths.Combine("tests", "interop", "js");

    public static async Task<ProcessResult> RunAsync(string script, string url, params string[] arguments)
    {
        await using var process = Start(script, url, arguments);
        return await process.WaitForExitAsync(Timeout);
    }

    /// <summary>Starts a script that a peer interacts with; wait for <see cref="ScenarioSummary.ReadyLine"/> first.</summary>
    public static ExternalProcess Start(string script, string url, params string[] arguments)
    {
        if (!System.IO.Directory.Exists(Path.Combine(Directory, "node_modules", "nats")))
        {
            throw new InvalidOperationException($"nats.js is not installed: run `npm ci` in {Directory} (scripts/test.sh does).");
        }

        return ExternalProcess.Start("node", [Path.Combine(Directory, script), url, .. arguments], Directory);
    }

    public static Task WaitReadyAsync(ExternalProcess process) =>
        process.WaitForLineAsync(line => line == ScenarioSummary.ReadyLine, Timeout);
}
