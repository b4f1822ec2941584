using System.Diagnostics;
using System.Text.Json;

namespace Broker.Compare.Load;

/// <summary>
/// The restart row (issue 11): a file stream of <c>count</c> messages of 1 KiB (1,000,000 by default: 1 GB), the
/// server stopped and started again on the same store directory, and the time from the new process's start until
/// <c>STREAM.INFO</c> answers with every message. <see cref="Run"/> fills the stream (its publish rate is logged, not
/// compared); <see cref="WaitUntilRecovered"/> is the measured part. The runner owns the processes
/// (<c>CompareRunner.Restart.cs</c>).
/// </summary>
internal sealed class StreamRestartWorkload : IWorkload
{
    /// <summary>Payload bytes per message.</summary>
    public const int PayloadSize = 1024;

    /// <summary>Messages of the default stream: 1,000,000 x 1 KiB, 1 GB of payload.</summary>
    public const long DefaultMessages = 1_000_000;

    /// <summary>The stream's subject prefix (the stream is <c>BENCH_bench_restart</c>).</summary>
    public const string Subject = "bench.restart";

    private static readonly TimeSpan RecoveryTimeout = TimeSpan.FromMinutes(5);

    public long CalibrationCount => DefaultMessages;

    public long SmokeCount => 2_000;

    private static string Stream => JetStreamSession.StreamName(Subject);

    /// <summary>Creates the file stream and publishes <paramref name="count"/> messages (1,000 in flight); not measured.</summary>
    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken)
    {
        using var scope = new RunScope(cancellationToken);
        using var setup = new JetStreamSession(server, "js-restart-fill", scope);
        setup.CreateStream(Stream, Subject, "file");
        var start = Stopwatch.GetTimestamp();
        setup.Fill(Subject, count, PayloadSize);
        var elapsed = Stopwatch.GetElapsedTime(start);
        var stored = MessagesIn(setup.Request($"$JS.API.STREAM.INFO.{Stream}", ""));
        if (stored != count)
        {
            throw new InvalidOperationException($"the stream holds {stored:N0} messages after {count:N0} were acknowledged");
        }

        return new Measurement(count, count * PayloadSize, elapsed);
    }

    /// <summary>
    /// Asks <c>STREAM.INFO</c> until the stream reports <paramref name="count"/> messages (a server still starting
    /// answers with no responders, an error, or fewer), and returns the time since <paramref name="startedTimestamp"/>.
    /// </summary>
    public static TimeSpan WaitUntilRecovered(NatsEndpoint server, long startedTimestamp, long count, CancellationToken cancellationToken)
    {
        using var scope = new RunScope(cancellationToken);
        using var session = new JetStreamSession(server, "js-restart", scope, noResponders: true);
        var deadline = Stopwatch.GetTimestamp() + (long)(RecoveryTimeout.TotalSeconds * Stopwatch.Frequency);
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var stored = MessagesIn(session.Request($"$JS.API.STREAM.INFO.{Stream}", ""));
            if (stored == count)
            {
                return Stopwatch.GetElapsedTime(startedTimestamp);
            }

            if (stored > count || Stopwatch.GetTimestamp() > deadline)
            {
                throw new InvalidOperationException($"after the restart the stream reports {stored:N0} of {count:N0} messages");
            }

            Thread.Sleep(1);
        }
    }

    /// <summary>The <c>state.messages</c> of a STREAM.INFO reply; -1 for a status (no responders) or an error.</summary>
    private static long MessagesIn(string reply)
    {
        if (reply.StartsWith("NATS/1.0", StringComparison.Ordinal) || reply.Length == 0)
        {
            return -1;
        }

        using var document = JsonDocument.Parse(reply);
        return document.RootElement.TryGetProperty("state", out var state) && state.TryGetProperty("messages", out var messages)
            ? messages.GetInt64()
            : -1;
    }
}
