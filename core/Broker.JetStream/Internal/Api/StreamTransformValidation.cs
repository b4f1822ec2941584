using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// A stream's <c>republish</c> (nats-server 2.9.10 <c>checkStreamCfg</c> and <c>configUpdateCheck</c>, with their
/// texts) and <c>subject_transform</c> (2.10.0, whose <c>addStream</c> and <c>update</c> refuse a transform they cannot
/// compile): the checks, and the compiled transforms the stream applies.
/// </summary>
internal static class StreamTransformValidation
{
    private const string AllSubjects = ">";

    /// <summary>
    /// nats-server 2.9.10 <c>checkStreamCfg</c>'s republish checks, on a configuration whose subjects are normalised;
    /// fills in the republish source (empty means all, which the stream then reports). Throws
    /// <see cref="ApiException"/> with nats-server's error.
    /// </summary>
    /// <param name="config">The normalised configuration, changed in place.</param>
    public static void Check(StreamConfig config)
    {
        if (config.RePublish is { } republish)
        {
            config.RePublish = republish = republish with { Source = string.IsNullOrEmpty(republish.Source) ? AllSubjects : republish.Source };
            var source = Encoding.UTF8.GetBytes(republish.Source);
            var destination = Encoding.UTF8.GetBytes(republish.Destination);
            var subjects = config.Subjects ?? [];
            // 2.10 dropped this check; a stream with a subject transform (2.10) stores subjects beyond its own.
            var transformed = !string.IsNullOrEmpty(config.SubjectTransform?.Destination);
            if (!transformed && !subjects.Any(s => Subjects.Collide(source, Encoding.UTF8.GetBytes(s))))
            {
                throw Invalid("stream configuration for republish source is not valid subset of subjects");
            }

            if (subjects.Any(s => Subjects.Collide(destination, Encoding.UTF8.GetBytes(s))))
            {
                throw Invalid("stream configuration for republish destination forms a cycle");
            }

            if (!TryCreate(republish.Source, republish.Destination, out _, out _))
            {
                throw Invalid("stream configuration for republish not valid");
            }
        }
    }

    /// <summary>
    /// nats-server 2.10.0 <c>addStream</c> and <c>update</c>: a subject transform that does not compile refuses the
    /// stream as it is about to be made or changed (2.10.0 does not look at it in <c>checkStreamCfg</c>).
    /// </summary>
    /// <param name="config">The checked configuration.</param>
    /// <param name="update">Whether it updates a stream, which 2.10.0 answers with another error and text.</param>
    public static void CheckSubjectTransform(StreamConfig config, bool update)
    {
        if (config.SubjectTransform is { } transform && !TryCompile(transform, out _, out var error))
        {
            throw new ApiException(update
                ? ApiErrors.StreamUpdate($"stream configuration for subject transform from '{transform.Source}' to '{transform.Destination}': {error}")
                : ApiErrors.StreamCreate($"stream subject transform from '{transform.Source}' to '{transform.Destination}': {error}"));
        }
    }

    /// <summary>
    /// nats-server 2.10.0 <c>addStream</c>: a mirror's or source's <c>subject_transforms</c> entry that does not compile
    /// refuses the stream, with its texts; an update is refused alike (2.10.0 would only log it and store the
    /// subjects untransformed).
    /// </summary>
    /// <param name="config">The checked configuration.</param>
    /// <param name="update">Whether it updates a stream (a stream update error).</param>
    public static void CheckSourceTransforms(StreamConfig config, bool update)
    {
        foreach (var origin in config.Mirror is { } mirror ? [mirror] : config.Sources ?? [])
        {
            foreach (var transform in origin.SubjectTransforms ?? [])
            {
                if (!TryCompile(transform, out _, out var error))
                {
                    var text = $"subject transform from '{transform.Source}' to '{transform.Destination}' for the {(config.Mirror is null ? "source" : "mirror")}: {error}";
                    throw new ApiException(update ? ApiErrors.StreamUpdate(text) : ApiErrors.StreamCreate(text));
                }
            }
        }
    }

    /// <summary>
    /// The compiled <c>subject_transforms</c> of a checked mirror or source, in order, leaving out those with an empty
    /// destination (they change nothing); null when none is left.
    /// </summary>
    public static StreamSubjectTransform[]? SourceTransforms(StreamSourceConfig origin)
    {
        List<StreamSubjectTransform>? compiled = null;
        foreach (var transform in origin.SubjectTransforms ?? [])
        {
            if (TryCompile(transform, out var one, out _) && one is not null)
            {
                (compiled ??= []).Add(one);
            }
        }

        return compiled?.ToArray();
    }

    /// <summary>nats-server 2.9.10 <c>configUpdateCheck</c>: a stream's republish is fixed at creation.</summary>
    public static void CheckUpdate(StreamConfig old, StreamConfig config)
    {
        if (!Equals(config.RePublish, old.RePublish))
        {
            throw Invalid("stream configuration update can not change RePublish");
        }
    }

    /// <summary>The compiled republish of a checked configuration; null without one.</summary>
    public static StreamSubjectTransform? RePublishTransform(StreamConfig config)
        => config.RePublish is { } republish && TryCreate(republish.Source ?? AllSubjects, republish.Destination, out var transform, out _) ? transform : null;

    /// <summary>The compiled subject transform of a checked configuration; null without one or with an empty destination.</summary>
    public static StreamSubjectTransform? IngestTransform(StreamConfig config)
        => config.SubjectTransform is { } transform && TryCompile(transform, out var compiled, out _) ? compiled : null;

    // nats-server 2.10 NewSubjectTransform: an empty source is all subjects, an empty destination no transform.
    private static bool TryCompile(SubjectTransformConfig config, out StreamSubjectTransform? compiled, out string? error)
    {
        if (config.Destination.Length == 0)
        {
            (compiled, error) = (null, null);
            return true;
        }

        return TryCreate(config.Source.Length == 0 ? AllSubjects : config.Source, config.Destination, out compiled, out error);
    }

    private static bool TryCreate(string source, string destination, out StreamSubjectTransform? transform, out string? error)
    {
        try
        {
            (transform, error) = (StreamSubjectTransform.Create(source, destination), null);
            return true;
        }
        catch (InvalidOperationException ex)
        {
            (transform, error) = (null, ex.Message);
            return false;
        }
    }

    private static ApiException Invalid(string reason) => new(ApiErrors.StreamInvalidConfig(reason));
}
