using System.Buffers;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal;

/// <summary>A copy of one API request, queued for the API loop.</summary>
internal sealed record ApiRequest(string Subject, string? Reply, byte[] Headers, byte[] Payload);

/// <summary>The account's API requests onto the engine's queue, and the recovery of its streams at start.</summary>
internal sealed partial class JetStreamAccount
{
    /// <summary>
    /// Every message on <c>$JS.API.&gt;</c> in the account: pull requests and direct gets belong to their consumer's
    /// and stream's own subscriptions and are skipped here without a copy; the rest is copied and queued.
    /// </summary>
    private void OnApiMessage(in BusMessage message)
    {
        var subject = message.Subject;
        if (subject.StartsWith("$JS.API.CONSUMER.MSG.NEXT."u8) || subject.StartsWith("$JS.API.DIRECT.GET."u8))
        {
            return;
        }

        var request = new ApiRequest(
            Encoding.UTF8.GetString(subject),
            message.ReplyTo.IsEmpty ? null : Encoding.UTF8.GetString(message.ReplyTo),
            message.Headers.IsEmpty ? [] : message.Headers.ToArray(),
            message.Payload.IsEmpty ? [] : message.Payload.ToArray());
        Engine.Enqueue(this, request);
    }

    /// <summary>Opens every stream the stores kept in the account's folder (durable stores only), with its consumers.</summary>
    private async Task RecoverAsync(CancellationToken cancellationToken)
    {
        var context = new StoreRecoveryContext(Name, StreamsDirectory);
        foreach (var provider in Engine.Providers)
        {
            var stores = await provider.RecoverAsync(context, cancellationToken).ConfigureAwait(false);
            var consumers = 0;
            var restored = 0;
            foreach (var store in stores)
            {
                try
                {
                    var metadata = StreamInfoJson.ReadMetadata(store.Config.Metadata.Span)
                        ?? throw new JsonException("no stream metadata");
                    var stream = await MessageStream.RestoreAsync(this, provider, store, metadata).ConfigureAwait(false);
                    AddStream(stream);
                    consumers += stream.ConsumerCount;
                    restored++;
                }
#pragma warning disable CA1031 // A stream that cannot be restored is logged and left on disk; the others still start.
                catch (Exception ex)
#pragma warning restore CA1031
                {
                    JetStreamLog.RecoveryFailed(Logger, store.Config.Name, provider.StorageType, ex.Message);
                    await store.DisposeAsync().ConfigureAwait(false);
                }
            }

            if (restored > 0)
            {
                JetStreamLog.Recovered(Logger, restored, consumers, provider.StorageType);
            }
        }
    }
}
