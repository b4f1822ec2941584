using System.Diagnostics;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// A stream following one origin stream, as its mirror or as one of its sources (nats-server's <c>sourceInfo</c>,
/// <c>setupMirrorConsumer</c>, <c>setSourceConsumer</c>): it asks the origin, through the JetStream API (under the
/// external API prefix for another account or domain), for an ephemeral push consumer with flow control and
/// heartbeats (<c>direct</c>, no acks) delivering to a subject of its own, appends what arrives, and starts over
/// (<c>retryMirrorConsumer</c>) when a heartbeat shows a gap, when the origin falls silent for three seconds, when
/// the consumer cannot be created (the origin deleted, not there yet): at most one request every two seconds, each
/// waited for five.
/// </summary>
/// <remarks>
/// Deliveries and the create reply arrive through the link's own bus client, whose handlers run one at a time, so
/// they are handled in order; the timers (health, retry) and stream info take <c>sync</c>, a leaf: the stream's gate
/// is only ever taken with it released.
/// </remarks>
internal sealed partial class SourceLink : IAsyncDisposable
{
    private static readonly TimeSpan HealthInterval = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan RetryThreshold = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan CreateTimeout = TimeSpan.FromSeconds(5);
    private const long AckWait = 22L * 3600 * 1_000_000_000;

    private readonly MessageStream stream;
    private readonly bool isMirror;
    private readonly IBusClient client;
    private readonly Lock sync = new();
    private readonly Timer health;
    private readonly Timer retry;
    private readonly byte[] indexNameBytes;

    // The compiled subject_transforms (2.10), replaced whole when the source changes; null without any.
    private StreamSubjectTransform[]? transforms;

    // Guarded by sync.
    private byte[]? consumerName;
    private ulong streamSeq;
    private ulong deliverSeq;
    private ulong lag;
    private long lastHeard;
    private long lastRequest;
    private ApiError? error;
    private bool setupInProgress;
    private bool running;
    private bool stopped;
    private IBusSubscription? deliveries;
    private IBusSubscription? replies;
    private ulong setupSequence;
    private long setupTime;
    private ulong retrySequence;
    private long retryTime;
    private IBusSubscription[]? mirrorDirect;
    private int generation;
    private bool directSubscribed;

    public SourceLink(MessageStream stream, StreamSourceConfig source, bool isMirror)
    {
        this.stream = stream;
        this.isMirror = isMirror;
        Source = source;
        IndexName = source.IndexName;
        indexNameBytes = System.Text.Encoding.UTF8.GetBytes(IndexName);
        client = stream.Account.Bus.CreateClient(new BusClientOptions
        {
            Name = $"JetStream stream {stream.Name} {(isMirror ? "mirror" : "source")} {source.Name}",
            Account = stream.Account.BusAccount,
        });
        health = new Timer(static state => ((SourceLink)state!).CheckHealth(), this, Timeout.Infinite, Timeout.Infinite);
        retry = new Timer(static state => ((SourceLink)state!).Retry(), this, Timeout.Infinite, Timeout.Infinite);
    }

    /// <summary>The origin as configured (a source's filter and transforms may change with an update).</summary>
    public StreamSourceConfig Source
    {
        get;
        set
        {
            field = value;
            transforms = StreamTransformValidation.SourceTransforms(value);
        }
    }

    /// <summary>nats-server's <c>iname</c>, the name in <c>Nats-Stream-Source</c>.</summary>
    public string IndexName { get; }

    /// <summary>The stream's last message time at start (nats-server <c>si.start</c>): where a source whose messages are gone resumes.</summary>
    public long ResumeTime { get; init; }

    /// <summary>Starts following; a source resumes after <paramref name="lastOriginSequence"/>, the last origin sequence its messages hold.</summary>
    public void Start(ulong lastOriginSequence)
    {
        lock (sync)
        {
            streamSeq = lastOriginSequence;
        }

        health.Change(HealthInterval, HealthInterval);
        Setup(lastOriginSequence + 1, 0);
    }

    /// <summary>A source's filter changed: from where it was when the filters overlap, else from now.</summary>
    public void Refilter(bool overlap)
    {
        ulong next;
        lock (sync)
        {
            next = streamSeq + 1;
        }

        Setup(next, overlap ? 0 : GoTime.NowNanoseconds());
    }

    /// <summary>
    /// Asks the origin for a new consumer (nats-server <c>setupMirrorConsumer</c> / <c>setSourceConsumer</c>): a
    /// mirror from its own last sequence + 1 (its configured start the first time), a source from
    /// <paramref name="sequence"/> or, when given, <paramref name="startTime"/>.
    /// </summary>
    private void Setup(ulong sequence, long startTime)
    {
        var last = isMirror ? stream.LastSequence : 0;
        string subject;
        string reply;
        byte[] body;
        lock (sync)
        {
            if (stopped)
            {
                return;
            }

            CancelLocked();
            if (isMirror)
            {
                streamSeq = last;
            }

            if (setupInProgress || (lastRequest != 0 && Stopwatch.GetElapsedTime(lastRequest) < RetryThreshold))
            {
                ScheduleRetryLocked(sequence, startTime);
                return;
            }

            lastRequest = Stopwatch.GetTimestamp();
            setupSequence = sequence;
            setupTime = startTime;
            var config = ConsumerFor(sequence, startTime, last);
            var external = Source.External;
            var deliverSubject = external is { Deliver.Length: > 0 }
                ? (external.Deliver + (isMirror ? ".M." : ".S.") + ConsumerValidation.NewName()).Replace("..", ".", StringComparison.Ordinal)
                : (isMirror ? "$JS.M." : "$JS.S.") + ConsumerValidation.NewName();
            config.DeliverSubject = deliverSubject;
            subject = ApiSubjects.Prefix + "CONSUMER.CREATE." + Source.Name;
            if (!string.IsNullOrEmpty(config.FilterSubject))
            {
                config.Name = (isMirror ? "mirror-" : "src-") + ConsumerValidation.NewName();
                subject += "." + config.Name + "." + config.FilterSubject;
            }

            if (external is not null)
            {
                subject = (external.Api + subject[(ApiSubjects.Prefix.Length - 1)..]).Replace("..", ".", StringComparison.Ordinal);
            }

            body = JsonSerializer.SerializeToUtf8Bytes(new ConsumerCreateRequest { Stream = Source.Name, Config = config }, JetStreamJson.Context.ConsumerCreateRequest);
            reply = "$JSC.R." + ConsumerValidation.NewName();

            // Subscribed before the request, as nats-server: the consumer may deliver before its create reply arrives.
            // The handlers carry the setup they belong to: what a cancelled consumer still delivers is dropped.
            var setup = ++generation;
            try
            {
                deliveries = client.Subscribe(deliverSubject, null, (in BusMessage message) => OnDelivery(message, setup));
                replies = client.Subscribe(reply, null, (in BusMessage message) => OnCreateReply(message, setup));
            }
            catch (ArgumentException ex)
            {
                // nats-server's JSMirrorConsumerSetupFailedErrF / JSSourceConsumerSetupFailedErrF, then a retry.
                CancelLocked();
                error = new ApiError(500, (ushort)(isMirror ? 10029 : 10045), ex.Message);
                ScheduleRetryLocked(sequence, startTime);
                return;
            }

            error = null;
            setupInProgress = true;
        }

        // A request that cannot go out (an origin name that makes no subject) is one that gets no answer, as in
        // nats-server: it is asked again after the five seconds.
        Send(subject, reply, body);
    }

    /// <summary>Publishes on the link's client; nothing when it cannot (the link stopping, a subject that is not one).</summary>
    private void Send(string subject, string? reply, byte[]? body)
    {
        try
        {
            client.Publish(
                System.Text.Encoding.UTF8.GetBytes(subject),
                reply is null ? default : System.Text.Encoding.UTF8.GetBytes(reply),
                default,
                body is null ? default : new System.Buffers.ReadOnlySequence<byte>(body));
        }
        catch (Exception ex) when (ex is ArgumentException or ObjectDisposedException or InvalidOperationException)
        {
        }
    }

    /// <summary>The consumer a mirror or source asks its origin for.</summary>
    private ConsumerConfig ConsumerFor(ulong sequence, long startTime, ulong last)
    {
        var config = new ConsumerConfig
        {
            AckPolicy = ConsumerAckPolicy.None,
            AckWait = AckWait,
            MaxDeliver = 1,
            Heartbeat = HealthInterval.Ticks * 100,
            FlowControl = true,
            Direct = true,
            FilterSubject = string.IsNullOrEmpty(Source.FilterSubject) ? null : Source.FilterSubject,
            FilterSubjects = Source.SubjectTransforms?.ConvertAll(static transform => transform.Source),
        };

        if (isMirror)
        {
            config.DeliverPolicy = DeliverPolicy.ByStartSequence;
            config.OptStartSeq = last + 1;
            if (last == 0)
            {
                // Only the first time: the configured start.
                config.OptStartSeq = Source.OptStartSeq;
                if (Source.OptStartSeq == 0 && Source.OptStartTime is { } time)
                {
                    config.OptStartTime = time;
                    config.DeliverPolicy = DeliverPolicy.ByStartTime;
                }
            }

            if (config.OptStartSeq == 0 && config.OptStartTime is null)
            {
                config.DeliverPolicy = DeliverPolicy.All;
            }

            return config;
        }

        if (startTime != 0 && sequence > 1)
        {
            config.OptStartTime = startTime;
            config.DeliverPolicy = DeliverPolicy.ByStartTime;
        }
        else if (sequence <= 1)
        {
            if (Source.OptStartSeq > 0)
            {
                config.OptStartSeq = Source.OptStartSeq;
                config.DeliverPolicy = DeliverPolicy.ByStartSequence;
            }
            else if (Source.OptStartTime is { } time)
            {
                config.OptStartTime = time < ResumeTime ? ResumeTime : time;
                config.DeliverPolicy = DeliverPolicy.ByStartTime;
            }
            else if (ResumeTime != 0)
            {
                // Resuming by time: the stream's messages from this source are gone (purged, expired).
                config.OptStartTime = ResumeTime;
                config.DeliverPolicy = DeliverPolicy.ByStartTime;
            }
        }
        else
        {
            config.OptStartSeq = sequence;
            config.DeliverPolicy = DeliverPolicy.ByStartSequence;
        }

        return config;
    }

    /// <summary>Drops the current consumer's subscriptions (nats-server <c>cancelSourceInfo</c>); the origin removes the consumer once nobody listens.</summary>
    private void CancelLocked()
    {
        deliveries?.Dispose();
        deliveries = null;
        replies?.Dispose();
        replies = null;
        consumerName = null;
        running = false;
        early = null;
        if (mirrorDirect is not null)
        {
            foreach (var subscription in mirrorDirect)
            {
                subscription.Dispose();
            }

            mirrorDirect = null;
        }

        directSubscribed = false;
    }

    /// <summary>Schedules a setup for when the two seconds since the last request have passed (nats-server <c>scheduleSetSourceConsumerRetryAsap</c>).</summary>
    private void ScheduleRetryLocked(ulong sequence, long startTime)
    {
        var next = lastRequest == 0 ? TimeSpan.Zero : RetryThreshold - Stopwatch.GetElapsedTime(lastRequest);
        if (next < TimeSpan.Zero)
        {
            next = TimeSpan.Zero;
        }

        retrySequence = sequence;
        retryTime = startTime;
        retry.Change(next + TimeSpan.FromMilliseconds(10), Timeout.InfiniteTimeSpan);
    }

    private void Retry()
    {
        ulong sequence;
        long time;
        lock (sync)
        {
            sequence = retrySequence;
            time = retryTime;
        }

        Setup(sequence, time);
    }

    /// <summary>Starts over from where the stream is (a mirror) or after the last origin sequence taken (a source).</summary>
    private void Restart()
    {
        ulong next;
        lock (sync)
        {
            next = streamSeq + 1;
        }

        Setup(next, 0);
    }

    /// <summary>Every second: a create request unanswered for five seconds is retried; an origin silent for three is asked again.</summary>
    private void CheckHealth()
    {
        var restart = false;
        lock (sync)
        {
            if (stopped)
            {
                return;
            }

            if (setupInProgress && Stopwatch.GetElapsedTime(lastRequest) > CreateTimeout)
            {
                replies?.Dispose();
                replies = null;
                setupInProgress = false;
                ScheduleRetryLocked(setupSequence, setupTime);
            }
            else if (running && Stopwatch.GetElapsedTime(lastHeard) > 3 * HealthInterval)
            {
                restart = true;
            }
        }

        if (restart)
        {
            Restart();
        }
    }

    public async ValueTask DisposeAsync()
    {
        lock (sync)
        {
            stopped = true;
            CancelLocked();
        }

        await health.DisposeAsync().ConfigureAwait(false);
        await retry.DisposeAsync().ConfigureAwait(false);
        await client.DisposeAsync().ConfigureAwait(false);
    }
}
