using System.Text.Json;

namespace Broker.Interop.Tests;

/// <summary>
/// The contract of the interop programs (nats.js scripts and the C client): the last line of standard output is a
/// JSON object with <c>"ok"</c>, and the exit code is 0 exactly when ok is true. A peer waiting for a program to
/// be subscribed looks for the line <c>{"ready":true}</c>.
/// </summary>
internal static class ScenarioSummary
{
    public const string ReadyLine = "{\"ready\":true}";

    /// <summary>Checks that the program succeeded and returns its summary; failures show everything it printed.</summary>
    public static JsonElement AssertOk(ProcessResult result)
    {
        Assert.False(result.TimedOut, "killed at its timeout:" + Environment.NewLine + result);
        var summary = Parse(result);
        Assert.True(summary.GetProperty("ok").GetBoolean(), "scenario failed:" + Environment.NewLine + result);
        Assert.True(result.ExitCode == 0, "ok summary but exit code " + result.ExitCode + Environment.NewLine + result);
        return summary;
    }

    private static JsonElement Parse(ProcessResult result)
    {
        var last = result.OutputLines.LastOrDefault(l => l.Length > 0)
            ?? throw new Xunit.Sdk.XunitException("no summary line:" + Environment.NewLine + result);
        try
        {
            using var document = JsonDocument.Parse(last);
            return document.RootElement.Clone();
        }
        catch (JsonException)
        {
            throw new Xunit.Sdk.XunitException("last line is not a JSON summary:" + Environment.NewLine + result);
        }
    }
}
