using System.Net;

namespace Broker.Security.Tests;

/// <summary>
/// Runs a permission case at the byte level: a restricted user and an unrestricted observer (<c>admin</c>) take turns
/// sending protocol text. Each step is <c>u|text</c> (the user), <c>o|text</c> (the observer) or <c>wait|ms</c>;
/// <c>\n</c> in a step's text becomes CRLF and the step ends with CRLF and a PING. What each connection received up to
/// the PONG is kept, without the PONGs, as one string of lines joined by <c> | </c>.
/// </summary>
internal static class WireScript
{
    public static async Task<(string User, string Observer)> RunAsync(EndPoint endPoint, SecurityUser user, IEnumerable<string> steps)
    {
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
            switch (who)
            {
                case "u":
                    await StepAsync(userClient, Wire(text), userLines);
                    break;
                case "o":
                    await StepAsync(observer, Wire(text), observerLines);
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
        return (string.Join(" | ", userLines), string.Join(" | ", observerLines));
    }

    private static string Wire(string text) => text.Replace("\n", "\r\n", StringComparison.Ordinal) + "\r\n";

    private static async Task StepAsync(RawClient client, string text, List<string> lines)
    {
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
        }
    }
}
