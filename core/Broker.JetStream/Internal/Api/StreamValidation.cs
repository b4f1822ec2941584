using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// nats-server's <c>checkStreamCfg</c> (defaults and validation of a stream configuration) and
/// <c>configUpdateCheck</c> (what an update may change), with its error texts.
/// </summary>
internal static class StreamValidation
{
    public const int MaxNameLength = 255;
    public const int MaxDescriptionLength = 4 * 1024;
    public const int MaxReplicas = 5;
    public const long DefaultDuplicateWindow = 2 * 60 * 1_000_000_000L;
    private const long HundredMilliseconds = 100_000_000;

    /// <summary>Fills in defaults and validates; throws <see cref="ApiException"/> with nats-server's error.</summary>
    /// <param name="request">The requested configuration.</param>
    /// <param name="maxDuplicateWindow">The server's <c>limits { duplicate_window }</c> in nanoseconds; 0 for none.</param>
    /// <param name="findStream">The account's streams by name, for the checks of mirrors and sources; null to skip them.</param>
    public static StreamConfig Normalize(StreamConfig request, long maxDuplicateWindow = 0, Func<string, StreamConfig?>? findStream = null)
    {
        if (!ApiSubjects.IsValidName(request.Name))
        {
            throw Invalid("stream name is required and can not contain '.', '*', '>'");
        }

        if (request.Name.Length > MaxNameLength)
        {
            throw Invalid($"stream name is too long, maximum allowed is {MaxNameLength}");
        }

        if ((request.Description?.Length ?? 0) > MaxDescriptionLength)
        {
            throw Invalid($"stream description is too long, maximum allowed is {MaxDescriptionLength}");
        }

        var config = request.Clone();
        if (string.IsNullOrEmpty(config.Storage))
        {
            config.Storage = "file";
        }

        if (config.Replicas == 0)
        {
            config.Replicas = 1;
        }

        if (config.Replicas > MaxReplicas)
        {
            throw Invalid($"maximum replicas is {MaxReplicas}");
        }

        if (config.Replicas < 0)
        {
            throw new ApiException(ApiErrors.ReplicasCountCannotBeNegative);
        }

        config.MaxMsgs = config.MaxMsgs == 0 ? -1 : config.MaxMsgs;
        config.MaxMsgsPerSubject = config.MaxMsgsPerSubject == 0 ? -1 : config.MaxMsgsPerSubject;
        config.MaxBytes = config.MaxBytes == 0 ? -1 : config.MaxBytes;
        config.MaxMsgSize = config.MaxMsgSize == 0 ? -1 : config.MaxMsgSize;
        config.MaxConsumers = config.MaxConsumers == 0 ? -1 : config.MaxConsumers;
        if (config.DuplicateWindow == 0 && config.Mirror is null)
        {
            var window = maxDuplicateWindow > 0 && maxDuplicateWindow < DefaultDuplicateWindow ? maxDuplicateWindow : DefaultDuplicateWindow;
            config.DuplicateWindow = config.MaxAge != 0 && config.MaxAge < window ? config.MaxAge : window;
        }

        if (config.MaxAge > 0 && config.MaxAge < HundredMilliseconds)
        {
            throw Invalid("max age needs to be >= 100ms");
        }

        if (config.DuplicateWindow < 0)
        {
            throw Invalid("duplicates window can not be negative");
        }

        if (config.MaxAge != 0 && config.DuplicateWindow > config.MaxAge)
        {
            throw Invalid("duplicates window can not be larger then max age");
        }

        if (maxDuplicateWindow > 0 && config.DuplicateWindow > maxDuplicateWindow)
        {
            throw Invalid($"duplicates window can not be larger then server limit of {ConfigSyntax.FormatDuration(maxDuplicateWindow)}");
        }

        if (config.DuplicateWindow > 0 && config.DuplicateWindow < HundredMilliseconds)
        {
            throw Invalid("duplicates window needs to be >= 100ms");
        }

        if (config.DenyPurge && config.AllowRollup)
        {
            throw Invalid("roll-ups require the purge permission");
        }

        if (config.DiscardNewPerSubject)
        {
            if (config.Discard != DiscardPolicy.New)
            {
                throw Invalid("discard new per subject requires discard new policy to be set");
            }

            if (config.MaxMsgsPerSubject <= 0)
            {
                throw Invalid("discard new per subject requires max msgs per subject > 0");
            }
        }

        // nats-server 2.11: markers are stored with a TTL and roll their subject up, so a (non-pedantic) request that
        // asks for them gets message TTLs and roll-ups.
        if (config.SubjectDeleteMarkerTtl > 0)
        {
            if (config.SubjectDeleteMarkerTtl < 1_000_000_000)
            {
                throw Invalid("subject delete marker TTL must be at least 1 second");
            }

            config.AllowMsgTtl = true;
            if (!config.AllowRollup)
            {
                (config.AllowRollup, config.DenyPurge) = (true, false);
            }
        }
        else if (config.SubjectDeleteMarkerTtl < 0)
        {
            throw Invalid("subject delete marker TTL must not be negative");
        }

        StreamSourceChecks.Check(config, findStream);

        // Features of nats-server this broker does not have are refused by name rather than ignored.
        if (!string.IsNullOrEmpty(config.TemplateOwner))
        {
            throw Invalid("stream templates are not supported by this broker");
        }

        if (UnsupportedFields.CheckStream(config) is { } unsupported)
        {
            throw Invalid(unsupported);
        }

        // nats-server 2.10 reads "none" and "s2" and fails the request's JSON on anything else; "none" is not echoed.
        config.Compression = config.Compression switch
        {
            null or "none" => null,
            "s2" => "s2",
            _ => throw new ApiException(ApiErrors.InvalidJson),
        };

        if (config.Subjects is not { Count: > 0 })
        {
            // A mirror or a stream with sources may have no subjects of its own.
            config.Subjects = config.Mirror is null && config.Sources is null ? [config.Name] : null;
        }
        else
        {
            var seen = new HashSet<string>(StringComparer.Ordinal);
            foreach (var subject in config.Subjects)
            {
                if (!seen.Add(subject))
                {
                    throw Invalid("duplicate subjects detected");
                }

                var bytes = Encoding.UTF8.GetBytes(subject);
                if (Subjects.IsSubsetOf(bytes, "$JS.API.>"u8))
                {
                    throw Invalid("subjects overlap with jetstream api");
                }

                if (!Subjects.IsValid(bytes))
                {
                    throw Invalid("invalid subject");
                }
            }
        }

        if (config.Subjects is { Count: > 1 })
        {
            foreach (var subject in config.Subjects)
            {
                foreach (var other in config.Subjects)
                {
                    if (other != subject && Subjects.Collide(Encoding.UTF8.GetBytes(other), Encoding.UTF8.GetBytes(subject)))
                    {
                        throw Invalid($"subject \"{subject}\" overlaps with \"{other}\"");
                    }
                }
            }
        }

        StreamTransformValidation.Check(config);
        return config;
    }

    /// <summary>nats-server <c>configUpdateCheck</c>: the normalised new configuration, or the reason it cannot replace the old.</summary>
    public static StreamConfig CheckUpdate(StreamConfig old, StreamConfig request, long maxDuplicateWindow = 0, Func<string, StreamConfig?>? findStream = null)
    {
        var config = Normalize(request, maxDuplicateWindow, findStream);
        if (config.Name != old.Name)
        {
            throw Invalid("stream configuration name must match original");
        }

        if (config.MaxConsumers != old.MaxConsumers)
        {
            throw Invalid("stream configuration update can not change MaxConsumers");
        }

        if (config.Storage != old.Storage)
        {
            throw Invalid("stream configuration update can not change storage type");
        }

        if (config.Retention != old.Retention)
        {
            throw Invalid("stream configuration update can not change retention policy");
        }

        if (config.FirstSeq != 0 && config.FirstSeq != old.FirstSeq)
        {
            // nats-server 2.10+ takes a new first_seq and does nothing with it (it only applies to a new store);
            // refused here so a request is not answered as if it had moved the stream's sequence. Leaving it out (0)
            // is accepted, as clients that build an update from scratch do.
            throw Invalid("stream configuration update can not change first sequence");
        }

        if (!config.Sealed && old.Sealed)
        {
            throw Invalid("stream configuration update can not unseal a sealed stream");
        }

        if (!config.DenyDelete && old.DenyDelete)
        {
            throw Invalid("stream configuration update can not cancel deny message deletes");
        }

        if (!config.DenyPurge && old.DenyPurge)
        {
            throw Invalid("stream configuration update can not cancel deny purge");
        }

        // 2.11: per-message TTLs can be turned on, not off (a message's TTL would silently stop counting).
        if (old.AllowMsgTtl && !config.AllowMsgTtl)
        {
            throw Invalid("message TTL status can not be disabled");
        }

        StreamTransformValidation.CheckUpdate(old, config);
        StreamSourceChecks.CheckUpdate(old, config);

        if (config.Sealed)
        {
            // Sealing: nothing expires, nothing is added, deleted or purged any more.
            config.MaxAge = 0;
            config.Discard = DiscardPolicy.New;
            config.DenyDelete = true;
            config.DenyPurge = true;
            config.AllowRollup = false;
        }

        return config;
    }

    private static ApiException Invalid(string reason) => new(ApiErrors.StreamInvalidConfig(reason));
}
