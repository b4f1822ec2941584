using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;

namespace Broker.Compare.Load;

/// <summary>How a stream-copy row moves messages from one stream into another.</summary>
internal enum StreamCopyMode
{
    /// <summary>
    /// A mirror created on an origin already holding the messages: the time from the mirror's create request until the
    /// mirror holds them all (its catch-up).
    /// </summary>
    MirrorCatchUp,

    /// <summary>
    /// A stream sourcing an origin while a publisher fills the origin (async publish, window 1,000): the time from the
    /// first publish until the sourcing stream holds every message, so a source that falls behind the publisher
    /// (its steady-state lag) shows as a lower rate.
    /// </summary>
    SourceFollow,
}

/// <summary>
/// Mirrors and sources (nats-server's flow-controlled push consumer on the origin, one per mirror or source) between
/// two memory streams of one server. The copy's message count is read from <c>STREAM.INFO</c> every few milliseconds,
/// on the setup connection. Units: messages the copy took in.
/// </summary>
internal sealed partial class StreamCopyWorkload(int payloadSize, StreamCopyMode mode) : IWorkload
{
    private static readonly TimeSpan PollEvery = TimeSpan.FromMilliseconds(5);

    public long CalibrationCount => 20_000;

    public long SmokeCount => 200;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken)
    {
        using var scope = new RunScope(cancellationToken);
        var origin = JetStreamSession.StreamName(subject);
        var copy = origin + "_COPY";
        using var setup = new JetStreamSession(server, "js-setup", scope);
        setup.DeleteStream(copy);
        setup.CreateStream(origin, subject);
        try
        {
            TimeSpan elapsed = default;
            scope.Start("js-copy", () =>
            {
                elapsed = mode == StreamCopyMode.MirrorCatchUp
                    ? MirrorCatchUp(setup, origin, copy, subject, count)
                    : SourceFollow(setup, server, scope, origin, copy, subject, count);
            });
            scope.Join(WorkloadTiming.RunTimeout);
            return new Measurement(count, count * payloadSize, elapsed);
        }
        finally
        {
            setup.DeleteStream(copy);
            setup.DeleteStream(origin);
        }
    }

    private TimeSpan MirrorCatchUp(JetStreamSession setup, string origin, string copy, string subject, long count)
    {
        setup.Fill(subject, count, payloadSize);
        var start = Stopwatch.GetTimestamp();
        Create(setup, copy, $"{{\"name\":\"{copy}\",\"storage\":\"memory\",\"mirror\":{{\"name\":\"{origin}\"}}}}");
        WaitForMessages(setup, copy, count);
        return Stopwatch.GetElapsedTime(start);
    }

    private TimeSpan SourceFollow(JetStreamSession setup, NatsEndpoint server, RunScope scope, string origin, string copy, string subject, long count)
    {
        Create(setup, copy, $"{{\"name\":\"{copy}\",\"storage\":\"memory\",\"sources\":[{{\"name\":\"{origin}\"}}]}}");

        // One message first, so the source's consumer is set up before the clock starts.
        setup.Fill(subject, 1, payloadSize, window: 1);
        WaitForMessages(setup, copy, 1);
        using var publisher = new JetStreamSession(server, "js-pub", scope);
        var start = Stopwatch.GetTimestamp();
        publisher.Fill(subject, count, payloadSize);
        WaitForMessages(setup, copy, count + 1);
        return Stopwatch.GetElapsedTime(start);
    }

    private static void Create(JetStreamSession setup, string name, string config)
    {
        var reply = setup.Request($"$JS.API.STREAM.CREATE.{name}", config);
        if (reply.Contains("\"error\"", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"stream create of {name} failed: {reply}");
        }
    }

    private static void WaitForMessages(JetStreamSession setup, string stream, long count)
    {
        var deadline = Stopwatch.GetTimestamp() + (long)(WorkloadTiming.RunTimeout.TotalSeconds * Stopwatch.Frequency);
        while (true)
        {
            var info = setup.Request($"$JS.API.STREAM.INFO.{stream}", "");
            var match = MessagesField().Match(info);
            if (match.Success && long.Parse(match.Groups[1].ValueSpan, CultureInfo.InvariantCulture) >= count)
            {
                return;
            }

            if (Stopwatch.GetTimestamp() > deadline)
            {
                throw new TimeoutException($"{stream} holds fewer than {count:N0} messages after {WorkloadTiming.RunTimeout}: {info}");
            }

            Thread.Sleep(PollEvery);
        }
    }

    [GeneratedRegex("\"state\":\\{\"messages\":(\\d+)")]
    private static partial Regex MessagesField();
}
