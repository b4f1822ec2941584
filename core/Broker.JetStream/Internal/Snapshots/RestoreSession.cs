using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Events;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// One restore's transfer (nats-server <c>processStreamRestore</c>): a subscription on
/// <c>$JS.SNAPSHOT.RESTORE.&lt;stream&gt;.&lt;id&gt;</c> takes the chunks, each a request answered with an empty
/// message once it is staged in a temporary file; an empty chunk ends the transfer and is answered with the stream's
/// info (a <c>stream_create_response</c>) or the restore's error. A chunk without a reply subject ends the restore, as
/// 5 s without a chunk does; the advisories <c>RESTORE_CREATE</c> and <c>RESTORE_COMPLETE</c> frame it.
/// </summary>
internal sealed class RestoreSession(JetStreamAccount account, StreamRestorer restorer, StreamConfig config, IStreamStoreProvider provider, byte[] requestHeaders) : IDisposable
{
    private static readonly TimeSpan ActivityInterval = TimeSpan.FromSeconds(5);

    private readonly Lock gate = new();
    private readonly TaskCompletionSource<(string? Reply, string? Error)> finished = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly string path = Path.Combine(Path.GetTempPath(), "js-restore-" + Guid.NewGuid().ToString("N"));
    private IBusClient? client;
    private FileStream? staging;
    private long total;
    private long lastActivity = Environment.TickCount64;

    /// <summary>Subscribes for the chunks and returns the subject to send them to.</summary>
    public string Start()
    {
        var subject = "$JS.SNAPSHOT.RESTORE." + config.Name + "." + EventIds.Next();
        SnapshotLog.RestoreStarted(account.Logger, account.Name, config.Name);
        account.Advisories.RestoreCreate(config.Name, requestHeaders);
        staging = new FileStream(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.None, 64 * 1024, FileOptions.DeleteOnClose);
        client = account.Bus.CreateClient(new BusClientOptions { Name = "JetStream restore " + config.Name, Account = account.BusAccount });
        var subscription = client.Subscribe(subject, null, OnChunk);
        _ = Task.Run(() => RunAsync(subscription));
        return subject;
    }

    private void OnChunk(in BusMessage message)
    {
        // The answer goes out after the lock is released: the gate is a leaf.
        byte[]? answer = null;
        var reply = message.ReplyTo.IsEmpty ? null : Encoding.UTF8.GetString(message.ReplyTo);
        lock (gate)
        {
            if (finished.Task.IsCompleted)
            {
                return;
            }

            lastActivity = Environment.TickCount64;
            if (reply is null)
            {
                finished.TrySetResult((null, $"restore for stream '{account.Name} > {config.Name}' requires reply subject for each chunk"));
                return;
            }

            if (message.Payload.IsEmpty)
            {
                finished.TrySetResult((reply, null));
                return;
            }

            try
            {
                foreach (var segment in message.Payload)
                {
                    staging!.Write(segment.Span);
                }

                total += message.Payload.Length;
                answer = [];
            }
            catch (IOException)
            {
                finished.TrySetResult((reply, "storage failure during restore"));
                answer = "-ERR 'storage failure during restore'"u8.ToArray();
            }
        }

        client!.Publish(reply, answer);
    }

    private async Task RunAsync(IBusSubscription subscription)
    {
        var start = GoTime.NowNanoseconds();
        try
        {
            while (!finished.Task.IsCompleted)
            {
                var idle = TimeSpan.FromMilliseconds(Environment.TickCount64 - Interlocked.Read(ref lastActivity));
                if (idle >= ActivityInterval)
                {
                    // nats-server drops a stalled restore without an advisory or an answer.
                    finished.TrySetResult((null, null));
                    SnapshotLog.RestoreFailed(account.Logger, account.Name, config.Name, "stalled");
                    return;
                }

                await Task.WhenAny(finished.Task, Task.Delay(ActivityInterval - idle)).ConfigureAwait(false);
            }

            var (reply, error) = await finished.Task.ConfigureAwait(false);
            var response = new ApiResponse("stream_create_response");
            ApiError? apiError = null;
            if (error is null)
            {
                try
                {
                    lock (gate)
                    {
                        staging!.Position = 0;
                    }

                    var stream = await restorer.RestoreAsync(config, provider, staging!).ConfigureAwait(false);
                    response.With(stream.Info(withSources: false));
                    SnapshotLog.RestoreCompleted(account.Logger, total, account.Name, config.Name);
                }
                catch (ApiException ex)
                {
                    // nats-server's Unless: an API error is the answer as it is, not wrapped in 10062.
                    apiError = ex.Error;
                    error = ex.Error.Description;
                }
#pragma warning disable CA1031 // Whatever fails the restore is its answer (nats-server answers every error so).
                catch (Exception ex)
#pragma warning restore CA1031
                {
                    error = ex.Message;
                }
            }

            account.Advisories.RestoreComplete(config.Name, start, GoTime.NowNanoseconds(), total, requestHeaders);
            if (error is not null)
            {
                SnapshotLog.RestoreFailed(account.Logger, account.Name, config.Name, error);
                response.WithError(apiError ?? SnapshotErrors.RestoreFailed(error));
            }

            if (reply is not null)
            {
                client!.Publish(reply, response.ToBytes());
                await client!.FlushAsync().ConfigureAwait(false);
            }
        }
        finally
        {
            subscription.Dispose();
            Dispose();
            if (client is not null)
            {
                await client.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    /// <summary>Deletes the staged chunks (the transfer ends by itself; this is its last step).</summary>
    public void Dispose()
    {
        lock (gate)
        {
            staging?.Dispose();
        }
    }
}
