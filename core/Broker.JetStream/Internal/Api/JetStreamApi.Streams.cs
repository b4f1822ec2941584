using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Api;

/// <summary>Stream requests: create, update, names, list, info, delete, purge.</summary>
internal sealed partial class JetStreamApi
{
    private const int NamesLimit = 1024;
    private const int ListLimit = 256;
    private const int MaxSubjectDetails = 100_000;

    /// <summary><c>STREAM.CREATE.&lt;stream&gt;</c> (nats-server <c>jsStreamCreateRequest</c>, <c>addStream</c>).</summary>
    private async Task CreateStreamAsync(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_create_response");
        if (!TryParse(request.Payload, JetStreamJson.Context.StreamConfig, out var requested, out var invalid))
        {
            Reply(request, response.WithError(invalid));
            return;
        }

        if (name != requested!.Name)
        {
            Reply(request, response.WithError(ApiErrors.StreamMismatch));
            return;
        }

        if (name.AsSpan().IndexOfAny('/', '\\') >= 0)
        {
            Reply(request, response.WithError(ApiErrors.StreamNameContainsPathSeparators));
            return;
        }

        if (requested.Sealed)
        {
            Reply(request, response.WithError(ApiErrors.StreamInvalidConfig("stream configuration for create can not be sealed")));
            return;
        }

        if (requested.MirrorDirect && requested.Mirror is null)
        {
            Reply(request, response.WithError(ApiErrors.StreamInvalidConfig("stream has no mirror but does have mirror direct")));
            return;
        }

        try
        {
            // nats-server says did_create also when the same stream already existed.
            var (stream, _) = await AddStreamAsync(requested).ConfigureAwait(false);
            response.With(stream.Info(), JetStreamJson.Context.StreamInfoModel).WithField("did_create", "true");
        }
        catch (ApiException ex)
        {
            response.WithError(ex.Error);
        }

        Reply(request, response);
    }

    private async Task<(MessageStream Stream, bool Created)> AddStreamAsync(StreamConfig requested)
    {
        var config = StreamValidation.Normalize(requested, engine.Options.MaxDuplicateWindowNanoseconds);
        if (config.Replicas > 1)
        {
            throw new ApiException(ApiErrors.StreamReplicasNotSupported);
        }

        if (engine.FindStream(config.Name) is { } existing)
        {
            // Creating the same stream again is fine; with a different configuration it is not.
            return existing.Config.SameAs(config) ? (existing, false) : throw new ApiException(ApiErrors.StreamNameExist);
        }

        var provider = engine.FindProvider(config.Storage);
        if (provider is null)
        {
            var reason = engine.StorageTypes.Count == 0
                ? $"no storage plugin is loaded, so storage type \"{config.Storage}\" is not available"
                : $"storage type \"{config.Storage}\" is not provided by any loaded storage plugin (available: {string.Join(", ", engine.StorageTypes.Order(StringComparer.Ordinal))})";
            JetStreamLog.StreamCreateFailed(engine.Logger, config.Name, reason);
            throw new ApiException(ApiErrors.StreamCreate("error creating store for stream: " + reason));
        }

        if (!engine.FitsReservation(provider.Medium, config.MaxBytes))
        {
            throw new ApiException(provider.Medium == StorageMedium.Memory ? ApiErrors.MemoryResourcesExceeded : ApiErrors.StorageResourcesExceeded);
        }

        if (engine.SubjectsOverlap(config.Subjects!, null))
        {
            throw new ApiException(ApiErrors.StreamSubjectOverlap);
        }

        MessageStream stream;
        try
        {
            stream = await MessageStream.CreateAsync(engine, provider, config).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is InvalidOperationException or IOException or UnauthorizedAccessException)
        {
            JetStreamLog.StreamCreateFailed(engine.Logger, config.Name, ex.Message);
            throw new ApiException(ApiErrors.StreamCreate("error creating store for stream: " + ex.Message));
        }

        engine.AddStream(stream);
        return (stream, true);
    }

    /// <summary><c>STREAM.UPDATE.&lt;stream&gt;</c> (nats-server <c>jsStreamUpdateRequest</c>).</summary>
    private void UpdateStream(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_update_response");
        if (!TryParse(request.Payload, JetStreamJson.Context.StreamConfig, out var requested, out var invalid))
        {
            Reply(request, response.WithError(invalid));
            return;
        }

        try
        {
            var normalized = StreamValidation.Normalize(requested!, engine.Options.MaxDuplicateWindowNanoseconds);
            if (name != normalized.Name)
            {
                throw new ApiException(ApiErrors.StreamMismatch);
            }

            var stream = engine.FindStream(name) ?? throw new ApiException(ApiErrors.StreamNotFound);
            var old = stream.Config;
            var config = StreamValidation.CheckUpdate(old, requested!, engine.Options.MaxDuplicateWindowNanoseconds);
            if (config.Replicas > 1)
            {
                throw new ApiException(ApiErrors.StreamReplicasNotSupported);
            }

            if (engine.SubjectsOverlap(config.Subjects!, stream))
            {
                throw new ApiException(ApiErrors.StreamSubjectOverlap);
            }

            if (config.MaxBytes > 0 && !engine.FitsReservation(stream.Medium, config.MaxBytes, Math.Max(old.MaxBytes, 0)))
            {
                throw new ApiException(stream.Medium == StorageMedium.Memory ? ApiErrors.MemoryResourcesExceeded : ApiErrors.StorageResourcesExceeded);
            }

            stream.Update(config);
            response.With(stream.Info(), JetStreamJson.Context.StreamInfoModel);
        }
        catch (ApiException ex)
        {
            response.WithError(ex.Error);
        }

        Reply(request, response);
    }

    /// <summary><c>STREAM.NAMES</c>: names, paged by 1024, optionally only streams whose subjects overlap a subject.</summary>
    private void StreamNames(ApiRequest request)
    {
        var response = new ApiResponse("stream_names_response");
        if (!TryParseList(request, out var list))
        {
            Reply(request, response.WithError(ApiErrors.InvalidJson).With(new ApiPaged(0, 0, 0), JetStreamJson.Context.ApiPaged));
            return;
        }

        var streams = Filtered(engine.StreamsByName(), list.Subject);
        var offset = Math.Clamp(list.Offset, 0, streams.Count);
        var names = streams.Skip(offset).Take(NamesLimit).Select(s => s.Name).ToList();
        response.With(new ApiPaged(streams.Count, offset, NamesLimit), JetStreamJson.Context.ApiPaged);

        // nats-server leaves the list null when no stream matches.
        response.WithField("streams", names.Count == 0 ? "null" : System.Text.Json.JsonSerializer.Serialize(names, JetStreamJson.Context.ListString));
        Reply(request, response);
    }

    /// <summary><c>STREAM.LIST</c>: stream infos, paged by 256.</summary>
    private void StreamList(ApiRequest request)
    {
        var response = new ApiResponse("stream_list_response");
        if (!TryParseList(request, out var list))
        {
            Reply(request, response.WithError(ApiErrors.InvalidJson).With(new ApiPaged(0, 0, 0), JetStreamJson.Context.ApiPaged));
            return;
        }

        var streams = Filtered(engine.StreamsByName(), list.Subject);
        var offset = Math.Clamp(list.Offset, 0, streams.Count);
        var infos = streams.Skip(offset).Take(ListLimit).Select(s => s.Info()).ToList();
        response.With(new ApiPaged(streams.Count, offset, ListLimit), JetStreamJson.Context.ApiPaged);
        response.WithField("streams", System.Text.Json.JsonSerializer.Serialize(infos, JetStreamJson.Context.ListStreamInfoModel));
        Reply(request, response);
    }

    private static List<MessageStream> Filtered(List<MessageStream> streams, string? subject)
    {
        if (string.IsNullOrEmpty(subject))
        {
            return streams;
        }

        var filter = Encoding.UTF8.GetBytes(subject);
        return [.. streams.Where(s => (s.Config.Subjects ?? []).Any(own => Subjects.Collide(filter, Encoding.UTF8.GetBytes(own))))];
    }

    /// <summary><c>STREAM.INFO.&lt;stream&gt;</c>, with <c>deleted_details</c> and a paged <c>subjects_filter</c>.</summary>
    private void StreamInfo(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_info_response");
        if (!TryParseList(request, out var list))
        {
            Reply(request, response.WithError(ApiErrors.InvalidJson).With(new ApiPaged(0, 0, 0), JetStreamJson.Context.ApiPaged));
            return;
        }

        if (engine.FindStream(name) is not { } stream)
        {
            Reply(request, response.WithError(ApiErrors.StreamNotFound).With(new ApiPaged(0, 0, 0), JetStreamJson.Context.ApiPaged));
            return;
        }

        var info = stream.Info(list.DeletedDetails);
        var paged = new ApiPaged(0, 0, 0);
        if (!string.IsNullOrEmpty(list.SubjectsFilter))
        {
            var subjects = stream.Store.GetSubjectsState(list.SubjectsFilter);
            if (subjects.Count > 0)
            {
                var ordered = subjects.Keys.Order(StringComparer.Ordinal).ToList();
                var offset = Math.Clamp(list.Offset, 0, ordered.Count);
                info.State.Subjects = ordered.Skip(offset).Take(MaxSubjectDetails).ToDictionary(s => s, s => subjects[s].Messages, StringComparer.Ordinal);
                paged = new ApiPaged(ordered.Count, offset, MaxSubjectDetails);
            }
        }

        Reply(request, response.With(paged, JetStreamJson.Context.ApiPaged).With(info, JetStreamJson.Context.StreamInfoModel));
    }

    /// <summary><c>STREAM.DELETE.&lt;stream&gt;</c>.</summary>
    private async Task DeleteStreamAsync(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_delete_response");
        if (!IsEmpty(request.Payload))
        {
            Reply(request, response.WithError(ApiErrors.NotEmptyRequest));
            return;
        }

        if (engine.FindStream(name) is not { } stream)
        {
            Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return;
        }

        engine.RemoveStream(stream);
        await stream.StopAsync(deleteData: true).ConfigureAwait(false);
        Reply(request, response.WithField("success", "true"));
    }

    /// <summary><c>STREAM.PURGE.&lt;stream&gt;</c> with an optional <c>{filter, seq, keep}</c>.</summary>
    private void PurgeStream(ApiRequest request, string name)
    {
        // nats-server's purge response always carries "purged", 0 with an error.
        var response = new ApiResponse("stream_purge_response");
        void Fail(ApiError error) => Reply(request, response.WithError(error).WithField("purged", "0"));
        var purge = new PurgeRequest();
        if (!IsEmpty(request.Payload))
        {
            if (!TryParse(request.Payload, JetStreamJson.Context.PurgeRequest, out var parsed, out var invalid))
            {
                Fail(invalid);
                return;
            }

            purge = parsed!;
            if (purge.Sequence > 0 && purge.Keep > 0)
            {
                Fail(ApiErrors.BadRequest);
                return;
            }
        }

        if (engine.FindStream(name) is not { } stream)
        {
            Fail(ApiErrors.StreamNotFound);
            return;
        }

        var config = stream.Config;
        if (config.Sealed)
        {
            Fail(ApiErrors.StreamSealed);
            return;
        }

        if (config.DenyPurge)
        {
            Fail(ApiErrors.StreamPurgeFailed("stream purge not permitted"));
            return;
        }

        var purged = stream.Purge(purge.Filter ?? "", purge.Sequence, purge.Keep);
        Reply(request, response.WithField("success", "true").WithField("purged", purged.ToString(System.Globalization.CultureInfo.InvariantCulture)));
    }
}
