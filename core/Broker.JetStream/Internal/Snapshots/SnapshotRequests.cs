using System.IO.Pipelines;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// <c>$JS.API.STREAM.SNAPSHOT.&lt;stream&gt;</c> and <c>$JS.API.STREAM.RESTORE.&lt;stream&gt;</c> (nats-server
/// <c>jsStreamSnapshotRequest</c>, <c>jsStreamRestoreRequest</c>): the checks and answers of the requests, then the
/// snapshot's archive (<see cref="StreamArchiveWriter"/>) streamed by <see cref="SnapshotSender"/>, or the restore's
/// chunks taken by <see cref="RestoreSession"/> and restored by <see cref="StreamRestorer"/>, both off the API queue.
/// </summary>
internal sealed class SnapshotRequests(JetStreamAccount account, StreamRequests streams, ApiRequestReader reader, ApiResponder responder)
{
    /// <summary><c>STREAM.SNAPSHOT.&lt;stream&gt;</c> with <c>{deliver_subject, no_consumers, chunk_size, jsck}</c>.</summary>
    public void Snapshot(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_snapshot_response");
        if (ApiRequestReader.IsEmpty(request.Payload))
        {
            responder.Reply(request, response.WithError(ApiErrors.BadRequest));
            return;
        }

        if (account.FindStream(name) is not { } stream)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return;
        }

        if (!TryParseSnapshot(request.Payload, out var deliver, out var noConsumers, out var chunkSize))
        {
            responder.Reply(request, response.WithError(ApiErrors.InvalidJson));
            return;
        }

        if (!Subjects.IsValid(Encoding.UTF8.GetBytes(deliver)))
        {
            responder.Reply(request, response.WithError(SnapshotErrors.DeliverSubjectInvalid));
            return;
        }

        _ = Task.Run(() => SnapshotAsync(request, stream, deliver, !noConsumers, chunkSize > 0 ? chunkSize : SnapshotSender.DefaultChunkSize));
    }

    /// <summary>
    /// Answers with the state taken now, then streams the archive as the engine writes it (through a pipe, so the
    /// answer comes at once and a large stream is never staged whole), as nats-server pipes its store's snapshot.
    /// </summary>
    private async Task SnapshotAsync(ApiRequest request, MessageStream stream, string deliver, bool includeConsumers, int chunkSize)
    {
        var start = GoTime.NowNanoseconds();
        try
        {
            var state = stream.State();
            responder.Reply(request, new ApiResponse("stream_snapshot_response")
                .WithField("config", Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(stream.Config, JetStreamJson.Context.StreamConfig)))
                .WithField("state", Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(state, JetStreamJson.Context.StreamStateModel))));
            account.Advisories.SnapshotCreate(stream.Name, state, request.Headers);

            var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 4 << 20, resumeWriterThreshold: 2 << 20, useSynchronizationContext: false));
            var writing = Task.Run(() => WriteArchive(pipe.Writer, stream, state, includeConsumers));
            long sent;
            try
            {
                await using var client = account.Bus.CreateClient(new BusClientOptions { Name = "JetStream snapshot " + stream.Name, Account = account.BusAccount });
                using var sender = new SnapshotSender(client, account.Interest, stream.Name, deliver, chunkSize);
                await using var archive = pipe.Reader.AsStream(leaveOpen: true);
                sent = await sender.SendAsync(archive, CancellationToken.None).ConfigureAwait(false);
            }
            finally
            {
                // A transfer that stopped early lets the writer finish too.
                await pipe.Reader.CompleteAsync().ConfigureAwait(false);
                await writing.ConfigureAwait(false);
            }

            account.Advisories.SnapshotComplete(stream.Name, start, GoTime.NowNanoseconds(), request.Headers);
            SnapshotLog.SnapshotCompleted(account.Logger, sent, account.Name, stream.Name);
        }
#pragma warning disable CA1031 // A snapshot runs on its own; what fails it is logged, the server goes on.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            SnapshotLog.SnapshotFailed(account.Logger, account.Name, stream.Name, ex.Message);
        }
    }

    private static async Task WriteArchive(PipeWriter writer, MessageStream stream, Models.StreamStateModel state, bool includeConsumers)
    {
        try
        {
            await using (var output = writer.AsStream(leaveOpen: true))
            {
                StreamArchiveWriter.Write(output, stream, state.FirstSeq, state.LastSeq, state.LastTime, includeConsumers);
            }

            await writer.CompleteAsync().ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Handed to the reader, which ends the transfer with it.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            await writer.CompleteAsync(ex).ConfigureAwait(false);
        }
    }

    private static bool TryParseSnapshot(byte[] payload, out string deliver, out bool noConsumers, out int chunkSize)
    {
        (deliver, noConsumers, chunkSize) = ("", false, 0);
        try
        {
            using var document = JsonDocument.Parse(payload);
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                return false;
            }

            foreach (var property in root.EnumerateObject())
            {
                switch (property.Name)
                {
                    case "deliver_subject":
                        deliver = property.Value.ValueKind == JsonValueKind.Null ? "" : property.Value.GetString() ?? "";
                        break;
                    case "no_consumers":
                        noConsumers = property.Value.GetBoolean();
                        break;
                    case "chunk_size":
                        chunkSize = property.Value.GetInt32();
                        break;
                    case "jsck":
                        // Messages read through the storage contract were checked by their store.
                        _ = property.Value.GetBoolean();
                        break;
                }
            }

            return true;
        }
        catch (Exception ex) when (ex is JsonException or InvalidOperationException or FormatException)
        {
            return false;
        }
    }

    /// <summary><c>STREAM.RESTORE.&lt;stream&gt;</c> with <c>{config, state}</c>: answers with the subject to send the chunks to.</summary>
    public void Restore(ApiRequest request, string name)
    {
        // nats-server's restore response always carries deliver_subject, "" with an error.
        var response = new ApiResponse("stream_restore_response");
        void Fail(ApiError error) => responder.Reply(request, response.WithError(error).WithField("deliver_subject", "\"\""));
        if (ApiRequestReader.IsEmpty(request.Payload))
        {
            Fail(ApiErrors.BadRequest);
            return;
        }

        StreamConfig? requested;
        try
        {
            using var document = JsonDocument.Parse(request.Payload);
            var configJson = document.RootElement.ValueKind == JsonValueKind.Object && document.RootElement.TryGetProperty("config", out var element)
                ? Encoding.UTF8.GetBytes(element.GetRawText())
                : "{}"u8.ToArray();
            if (document.RootElement.ValueKind != JsonValueKind.Object || !reader.TryParse(configJson, JetStreamJson.Context.StreamConfig, out requested, out _))
            {
                Fail(ApiErrors.InvalidJson);
                return;
            }
        }
        catch (JsonException)
        {
            Fail(ApiErrors.InvalidJson);
            return;
        }

        if (string.IsNullOrEmpty(requested!.Name))
        {
            requested.Name = name;
        }

        StreamConfig config;
        IStreamStoreProvider provider;
        try
        {
            var (checkedConfig, found) = streams.CheckNewStream(requested, out var existing);
            if (existing is not null)
            {
                Fail(SnapshotErrors.NameExistRestoreFailed);
                return;
            }

            (config, provider) = (checkedConfig, found!);
        }
        catch (ApiException ex)
        {
            Fail(ex.Error);
            return;
        }

        var session = new RestoreSession(account, new StreamRestorer(account), config, provider, request.Headers);
        var subject = session.Start();
        responder.Reply(request, response.WithField("deliver_subject", JsonSerializer.Serialize(subject, JetStreamJson.Context.String)));
    }
}
