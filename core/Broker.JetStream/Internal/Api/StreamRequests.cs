using System.Text;
using System.Text.Json.Serialization.Metadata;
using Broker.Abstractions;
using Broker.JetStream.Internal.Events;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// Stream requests (nats-server <c>jsStream*Request</c>): create, update, names, list, info, delete, purge. Streams are
/// created against the account's stores, limits and reservations, and registered with it.
/// </summary>
internal sealed class StreamRequests(JetStreamAccount account, ApiRequestReader reader, ApiResponder responder)
{
    /// <summary><c>STREAM.CREATE.&lt;stream&gt;</c> (nats-server <c>jsStreamCreateRequest</c>, <c>addStream</c>).</summary>
    public async Task CreateAsync(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_create_response");
        if (!reader.TryParse(request.Payload, JetStreamJson.Context.StreamConfig, out var requested, out var invalid))
        {
            responder.Reply(request, response.WithError(invalid));
            return;
        }

        if (name != requested!.Name)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamMismatch));
            return;
        }

        if (name.AsSpan().IndexOfAny('/', '\\') >= 0)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamNameContainsPathSeparators));
            return;
        }

        if (requested.Sealed)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamInvalidConfig("stream configuration for create can not be sealed")));
            return;
        }

        if (requested.MirrorDirect && requested.Mirror is null)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamInvalidConfig("stream has no mirror but does have mirror direct")));
            return;
        }

        try
        {
            // nats-server says did_create also when the same stream already existed.
            var (stream, created) = await AddStreamAsync(requested).ConfigureAwait(false);
            if (created)
            {
                account.Advisories.StreamAction(stream.Name, StreamActionKind.Create);
            }

            // nats-server's create response has no mirror or sources state (info, update and list do).
            response.With(stream.Info(withSources: false)).WithField("did_create", "true");
        }
        catch (ApiException ex)
        {
            response.WithError(ex.Error);
        }

        responder.Reply(request, response);
    }

    private async Task<(MessageStream Stream, bool Created)> AddStreamAsync(StreamConfig requested)
    {
        var (config, provider) = CheckNewStream(requested, out var existing);
        if (existing is not null)
        {
            // Creating the same stream again is fine; with a different configuration it is not.
            return existing.Config.SameAs(config) ? (existing, false) : throw new ApiException(ApiErrors.StreamNameExist);
        }

        MessageStream stream;
        try
        {
            stream = await MessageStream.CreateAsync(account, provider!, config).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is InvalidOperationException or IOException or UnauthorizedAccessException)
        {
            JetStreamLog.StreamCreateFailed(account.Logger, config.Name, ex.Message);
            throw new ApiException(ApiErrors.StreamCreate("error creating store for stream: " + ex.Message));
        }

        account.AddStream(stream);
        return (stream, true);
    }

    /// <summary>
    /// The checks of a new stream's configuration against the account (nats-server <c>checkStreamCfg</c> and
    /// <c>addStream</c>'s), shared by create and restore: the normalized configuration and the provider of its storage
    /// type, or the stream of that name that exists already (then the provider is null).
    /// </summary>
    /// <exception cref="ApiException">The configuration is refused.</exception>
    public (StreamConfig Config, IStreamStoreProvider? Provider) CheckNewStream(StreamConfig requested, out MessageStream? existing)
    {
        // nats-server checks the account's stream count before anything else of the configuration.
        account.CheckStreamCount(requested);
        var config = StreamValidation.Normalize(requested, account.Options.MaxDuplicateWindowNanoseconds, account.FindStreamConfig);
        if (config.Replicas > 1)
        {
            throw new ApiException(ApiErrors.StreamReplicasNotSupported);
        }

        account.CheckStreamBytes(config);
        existing = account.FindStream(config.Name);
        if (existing is not null)
        {
            return (config, null);
        }

        var provider = account.FindProvider(config.Storage);
        if (provider is null)
        {
            var reason = account.StorageTypes.Count == 0
                ? $"no storage plugin is loaded, so storage type \"{config.Storage}\" is not available"
                : $"storage type \"{config.Storage}\" is not provided by any loaded storage plugin (available: {string.Join(", ", account.StorageTypes.Order(StringComparer.Ordinal))})";
            JetStreamLog.StreamCreateFailed(account.Logger, config.Name, reason);
            throw new ApiException(ApiErrors.StreamCreate("error creating store for stream: " + reason));
        }

        if (StoreLacksTtl(config, provider) is { } lacking)
        {
            throw new ApiException(ApiErrors.StreamCreate("error creating store for stream: " + lacking));
        }

        account.CheckReservation(provider.Medium, config.MaxBytes);
        if (!account.FitsReservation(provider.Medium, config.MaxBytes))
        {
            throw new ApiException(provider.Medium == StorageMedium.Memory ? ApiErrors.MemoryResourcesExceeded : ApiErrors.StorageResourcesExceeded);
        }

        // 2.10.0 addStream: the mirror's and sources' transforms before the subjects' overlap.
        StreamTransformValidation.CheckSourceTransforms(config, update: false);
        if (account.SubjectsOverlap(config.Subjects ?? [], null))
        {
            throw new ApiException(ApiErrors.StreamSubjectOverlap);
        }

        StreamTransformValidation.CheckSubjectTransform(config, update: false);
        return (config, provider);
    }

    /// <summary><c>STREAM.UPDATE.&lt;stream&gt;</c> (nats-server <c>jsStreamUpdateRequest</c>).</summary>
    public void Update(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_update_response");
        if (!reader.TryParse(request.Payload, JetStreamJson.Context.StreamConfig, out var requested, out var invalid))
        {
            responder.Reply(request, response.WithError(invalid));
            return;
        }

        try
        {
            var normalized = StreamValidation.Normalize(requested!, account.Options.MaxDuplicateWindowNanoseconds, account.FindStreamConfig);
            if (name != normalized.Name)
            {
                throw new ApiException(ApiErrors.StreamMismatch);
            }

            var stream = account.FindStream(name) ?? throw new ApiException(ApiErrors.StreamNotFound);
            var old = stream.Config;
            var config = StreamValidation.CheckUpdate(old, requested!, account.Options.MaxDuplicateWindowNanoseconds, account.FindStreamConfig);
            if (config.Replicas > 1)
            {
                throw new ApiException(ApiErrors.StreamReplicasNotSupported);
            }

            if (account.SubjectsOverlap(config.Subjects ?? [], stream))
            {
                throw new ApiException(ApiErrors.StreamSubjectOverlap);
            }

            account.CheckStreamBytes(config);
            if (config.MaxBytes > 0)
            {
                account.CheckReservation(stream.Medium, config.MaxBytes, Math.Max(old.MaxBytes, 0));
            }

            if (config.MaxBytes > 0 && !account.FitsReservation(stream.Medium, config.MaxBytes, Math.Max(old.MaxBytes, 0)))
            {
                throw new ApiException(stream.Medium == StorageMedium.Memory ? ApiErrors.MemoryResourcesExceeded : ApiErrors.StorageResourcesExceeded);
            }

            if ((!old.AllowMsgTtl || old.SubjectDeleteMarkerTtl == 0) && StoreLacksTtl(config, stream.Provider) is { } lacking)
            {
                throw new ApiException(ApiErrors.StreamInvalidConfig(lacking));
            }

            StreamTransformValidation.CheckSourceTransforms(config, update: true);
            StreamTransformValidation.CheckSubjectTransform(config, update: true);
            stream.Update(config);
            account.Advisories.StreamAction(name, StreamActionKind.Modify);
            response.With(stream.Info());
        }
        catch (ApiException ex)
        {
            response.WithError(ex.Error);
        }

        responder.Reply(request, response);
    }

    /// <summary>
    /// Why the stream's store cannot take <c>allow_msg_ttl</c> or <c>subject_delete_marker_ttl</c> (its provider does
    /// not declare <see cref="StoreFeatures.MessageTtl"/> or <see cref="StoreFeatures.SubjectExpiries"/>), or null.
    /// </summary>
    private static string? StoreLacksTtl(StreamConfig config, IStreamStoreProvider provider) =>
        config.AllowMsgTtl && !provider.Features.HasFlag(StoreFeatures.MessageTtl)
            ? $"storage type \"{config.Storage}\" does not support per-message TTLs (allow_msg_ttl)"
            : config.SubjectDeleteMarkerTtl > 0 && !provider.Features.HasFlag(StoreFeatures.SubjectExpiries)
                ? $"storage type \"{config.Storage}\" does not support subject delete markers (subject_delete_marker_ttl)"
                : null;

    /// <summary><c>STREAM.NAMES</c>: names, paged by 1024, optionally only streams whose subjects overlap a subject.</summary>
    public void Names(ApiRequest request) =>
        // nats-server leaves the list null when no stream matches.
        ReplyPage(request, "stream_names_response", ApiPager.Names, static s => s.Name, JetStreamJson.Context.ListString, whenEmpty: "null");

    /// <summary><c>STREAM.LIST</c>: stream infos, paged by 256.</summary>
    public void List(ApiRequest request) =>
        ReplyPage(request, "stream_list_response", ApiPager.List, static s => s.Info(), JetStreamJson.Context.ListStreamInfoModel);

    /// <summary>A page of the streams, optionally only those whose subjects overlap the request's subject.</summary>
    private void ReplyPage<T>(ApiRequest request, string type, ApiPager pager, Func<MessageStream, T> select, JsonTypeInfo<List<T>> typeInfo, string? whenEmpty = null)
    {
        var response = new ApiResponse(type);
        if (!reader.TryParseList(request, out var list))
        {
            responder.Reply(request, response.WithError(ApiErrors.InvalidJson).With(ApiPager.None));
            return;
        }

        var streams = Filtered(account.StreamsByName(), list.Subject);
        responder.Reply(request, pager.Write(response, "streams", streams, list.Offset, select, typeInfo, whenEmpty));
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
    public void Info(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_info_response");
        if (!reader.TryParseList(request, out var list))
        {
            responder.Reply(request, response.WithError(ApiErrors.InvalidJson).With(ApiPager.None));
            return;
        }

        if (account.FindStream(name) is not { } stream)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamNotFound).With(ApiPager.None));
            return;
        }

        var info = stream.Info(list.DeletedDetails);
        var paged = ApiPager.None;
        if (!string.IsNullOrEmpty(list.SubjectsFilter))
        {
            var subjects = stream.Store.GetSubjectsState(list.SubjectsFilter);
            if (subjects.Count > 0)
            {
                var ordered = subjects.Keys.Order(StringComparer.Ordinal).ToList();
                var page = ApiPager.SubjectDetails.Page(ordered, list.Offset, static s => s, out paged);
                info.State.Subjects = page.ToDictionary(s => s, s => subjects[s].Messages, StringComparer.Ordinal);
            }
        }

        responder.Reply(request, response.With(paged).With(info));
    }

    /// <summary><c>STREAM.DELETE.&lt;stream&gt;</c>.</summary>
    public async Task DeleteAsync(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_delete_response");
        if (!ApiRequestReader.IsEmpty(request.Payload))
        {
            responder.Reply(request, response.WithError(ApiErrors.NotEmptyRequest));
            return;
        }

        if (account.FindStream(name) is not { } stream)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return;
        }

        account.RemoveStream(stream);
        await stream.StopAsync(deleteData: true).ConfigureAwait(false);
        account.Advisories.StreamAction(name, StreamActionKind.Delete);
        responder.Reply(request, response.WithField("success", "true"));
    }

    /// <summary><c>STREAM.PURGE.&lt;stream&gt;</c> with an optional <c>{filter, seq, keep}</c>.</summary>
    public void Purge(ApiRequest request, string name)
    {
        // nats-server's purge response always carries "purged", 0 with an error.
        var response = new ApiResponse("stream_purge_response");
        void Fail(ApiError error) => responder.Reply(request, response.WithError(error).WithField("purged", "0"));
        var purge = new PurgeRequest();
        if (!ApiRequestReader.IsEmpty(request.Payload))
        {
            if (!reader.TryParse(request.Payload, JetStreamJson.Context.PurgeRequest, out var parsed, out var invalid))
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

        if (account.FindStream(name) is not { } stream)
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
        responder.Reply(request, response.WithField("success", "true").WithField("purged", purged.ToString(System.Globalization.CultureInfo.InvariantCulture)));
    }
}
