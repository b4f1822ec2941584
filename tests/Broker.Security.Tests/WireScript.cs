using System.Net;

namespace Broker.Security.Tests;

/// <summary>
/// Runs a permission case at the byte level: a restricted user and an unrestricted observer (<c>admin</c>) take turns
/// sending protocol text. Each step is <c>u|text</c> (the user), <c>o|text</c> (the observer) or <c>wait|ms</c>;
/// <c>u2|text</c> / <c>o2|text</c> also wait for at least two lines (a JetStream API reply comes after the PONG);
/// <c>\n</c> in a step's text becomes CRLF and the step ends with CRLF and a PING. What each connection received up to
/// the PONG is kept, without the PONGs, as one string of lines joined by <c> | </c>.
/// </summary>
internal static class WireScript
{
    public static async Task<(string User, string Observer)> RunAsync(EndPoint endPoint, SecurityUser user, IEnumerable<string> steps, Func<string, string>? normalize = null)
    {
        normalize ??= line => line;
        await using var userClient = await RawClient.ConnectAsync(endPoint);
        await using var observer = await RawClient.ConnectAsync(endPoint);
        var userLines = new List<string>();
        var observerLines = new List<string>();
        await StepAsync(userClient, user.Connect, userLines);
        await StepAsync(observer, SecurityUsers.Admin.Connect, observerLines);
        foreach (var step in steps)
        {
            var separator = step.IndexOf('|', StringComparison.Ordinal);
            var who = step[..separator];
            var text = step[(separator + 1)..];
            var awaited = who.Length > 1 && who[1..].All(char.IsAsciiDigit) ? int.Parse(who[1..], System.Globalization.CultureInfo.InvariantCulture) : 0;
            switch (awaited > 0 ? who[..1] : who)
            {
                case "u":
                    await StepAsync(userClient, Wire(text), userLines, awaited);
                    break;
                case "o":
                    await StepAsync(observer, Wire(text), observerLines, awaited);
                    break;
                case "wait":
                    await Task.Delay(int.Parse(text, System.Globalization.CultureInfo.InvariantCulture));
                    break;
                default:
                    throw new ArgumentException("unknown step " + step, nameof(steps));
            }
        }

        // Deliveries the last step caused reach the other connection before its own PONG.
        await StepAsync(userClient, string.Empty, userLines);
        await StepAsync(observer, string.Empty, observerLines);
        return (string.Join(" | ", userLines.Select(normalize)), string.Join(" | ", observerLines.Select(normalize)));
    }

    /// <summary>A PUB of <paramref name="payload"/> (ASCII) as one step's text, its size counted.</summary>
    public static string Pub(string subject, string payload, string? reply = null) =>
        $"PUB {subject}{(reply is null ? string.Empty : " " + reply)} {payload.Length}\n{payload}";

    private static string Wire(string text) => text.Replace("\n", "\r\n", StringComparison.Ordinal) + "\r\n";

    private static async Task StepAsync(RawClient client, string text, List<string> lines, int awaited = 0)
    {
        var before = lines.Count;
        if (client.Closed)
        {
            return;
        }

        if (text.Length > 0)
        {
            await client.SendAsync(text);
        }

        var transcript = await client.PingAndCollectAsync();
        lines.AddRange(transcript.Lines.Where(line => line != "PONG"));
        if (transcript.Closed)
        {
            lines.Add("[closed]");
            return;
        }

        while (lines.Count - before < awaited)
        {
            var line = await client.ReadLineAsync();
            if (line == "PING")
            {
                await client.SendAsync("PONG\r\n");
            }
            else
            {
                lines.Add(line);
            }
        }
    }
}
