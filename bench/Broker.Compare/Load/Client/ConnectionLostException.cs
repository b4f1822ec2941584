using System.Text.RegularExpressions;

namespace Broker.Compare.Load.Client;

/// <summary>
/// A NATS.Client.Core run failed because one of its connections was disconnected (<see cref="CoreRun"/>): which
/// connection, by which side, the server's <c>-ERR</c>; <see cref="WithServerLog"/> adds what the server logged.
/// </summary>
internal sealed class ConnectionLostException(string message, ulong? clientId) : Exception(message)
{
    /// <summary>The connection's cid on the server (from its INFO), when it had one.</summary>
    public ulong? ClientId { get; } = clientId;

    /// <summary>
    /// The message with the server's own lines about this connection (both servers write <c>cid:N</c> in them, e.g.
    /// a slow consumer's close), from the output it has printed so far; waits up to a second for the line to be read.
    /// </summary>
    public string WithServerLog(Func<string> outputTail)
    {
        ArgumentNullException.ThrowIfNull(outputTail);
        if (ClientId is not { } cid)
        {
            return Message;
        }

        var mention = new Regex($@"\bcid:{cid}\b", RegexOptions.CultureInvariant);
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(1);
        while (true)
        {
            var lines = outputTail().Split('\n').Select(l => l.Trim()).Where(l => mention.IsMatch(l)).ToList();
            if (lines.Count > 0 || DateTime.UtcNow > deadline)
            {
                return lines.Count == 0 ? $"{Message}; the server logged nothing about cid:{cid}" : $"{Message}; the server logged: {string.Join(" | ", lines)}";
            }

            Thread.Sleep(20);
        }
    }
}
