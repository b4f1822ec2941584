using System.Buffers;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// Recreates a stream from a snapshot archive (nats-server <c>Account.RestoreStream</c>) in any store: the requested
/// configuration is the stream's (its name must be the archive's), a new store of its storage type gets every message
/// with its original sequence and, where the provider keeps them (<see cref="StoreFeatures.Timestamps"/>), its original
/// time (others take the current time). The first sequence is set with <see cref="IStreamStore.Compact"/>; a deleted
/// sequence after it is stored as an empty message at the previous message's time and removed at once (a
/// <see cref="IStreamStore.Skip"/> would move the stream's last time to now, and later times with it). The stream's
/// limits apply once every message is in. The durable consumers get their configuration and state (ephemeral ones are left
/// out: they would not survive a restart here either). The stream then opens as after a restart.
/// </summary>
internal sealed class StreamRestorer(JetStreamAccount account)
{
    /// <exception cref="InvalidDataException">The archive is not a valid snapshot of this stream.</exception>
    /// <exception cref="ApiException">The stream exists by now.</exception>
    public async Task<MessageStream> RestoreAsync(StreamConfig config, IStreamStoreProvider provider, Stream archive)
    {
        using var reader = new StreamArchiveReader(archive);
        reader.ReadMeta();
        if (reader.StreamName != config.Name)
        {
            throw new InvalidDataException("stream names do not match");
        }

        if (account.FindStream(config.Name) is not null)
        {
            throw new ApiException(SnapshotErrors.NameExistRestoreFailed);
        }

        var created = reader.Created != 0 ? reader.Created : GoTime.NowNanoseconds();
        // The messages go in without limits (as nats-server lays its files down first), which apply once all are in.
        var storeConfig = MessageStream.StoreConfig(account, config, created);
        IStreamStore? store = await provider.CreateAsync(storeConfig with
        {
            MaxMessages = -1,
            MaxBytes = -1,
            MaxAge = TimeSpan.Zero,
            MaxMessagesPerSubject = -1,
            Discard = DiscardPolicy.Old,
            DiscardNewPerSubject = false,
        }).ConfigureAwait(false);
        try
        {
            var keepTimes = provider.Features.HasFlag(StoreFeatures.Timestamps);
            var appender = new Appender(store, keepTimes);
            var consumers = reader.ReadRest(appender.Append);
            appender.SkipThrough(reader.LastSequence);
            store.UpdateConfig(storeConfig);
            foreach (var consumer in consumers)
            {
                if (!consumer.Config.IsDurable)
                {
                    continue;
                }

                var consumerStore = store.OpenConsumerStore(StoredConsumerMetadata.StoreConfig(consumer.Name, consumer.Config, consumer.Created));
                consumerStore.Update(consumer.State);
                await consumerStore.FlushAsync().ConfigureAwait(false);
            }

            await store.FlushAsync().ConfigureAwait(false);
            if (account.FindStream(config.Name) is not null)
            {
                throw new ApiException(SnapshotErrors.NameExistRestoreFailed);
            }

            var stream = await MessageStream.RestoreAsync(account, provider, store, new StoredStreamMetadata { Config = config, Created = created }).ConfigureAwait(false);
            try
            {
                account.AddStream(stream);
            }
            catch (ArgumentException)
            {
                // Another restore (or a create) of the name finished first.
                store = null;
                await stream.StopAsync(deleteData: true).ConfigureAwait(false);
                throw new ApiException(SnapshotErrors.NameExistRestoreFailed);
            }

            return stream;
        }
        catch when (store is not null)
        {
            await store.DeleteAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Appends the archive's messages at their sequences.</summary>
    private sealed class Appender(IStreamStore store, bool keepTimes)
    {
        private static readonly byte[] GapSubject = "_restore.gap"u8.ToArray();
        private bool started;
        private long lastTimestamp;

        public void Append(ulong sequence, long timestamp, ReadOnlyMemory<byte> subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload)
        {
            MoveTo(sequence);
            var result = store.Store(subject.Span, new ReadOnlySequence<byte>(headers), new ReadOnlySequence<byte>(payload), Options(timestamp));
            if (result.Status != StoreStatus.Stored || result.Sequence != sequence)
            {
                throw new InvalidDataException($"message {sequence} could not be stored: {result.Status}");
            }

            lastTimestamp = timestamp;
        }

        /// <summary>Moves the store on so its last sequence is at least <paramref name="last"/>.</summary>
        public void SkipThrough(ulong last)
        {
            if (last > 0)
            {
                MoveTo(last + 1);
            }
        }

        private StoreOptions Options(long timestamp) => new() { Timestamp = keepTimes ? timestamp : 0 };

        /// <summary>Moves the store on so the next append gets <paramref name="sequence"/>.</summary>
        private void MoveTo(ulong sequence)
        {
            var next = store.GetState().LastSequence + 1;
            if (!started)
            {
                started = true;
                if (sequence > next)
                {
                    // The first sequence: the empty store moves on, as for first_seq.
                    store.Compact(sequence);
                    return;
                }
            }

            for (; next < sequence; next++)
            {
                var gap = store.Store(GapSubject, ReadOnlySequence<byte>.Empty, ReadOnlySequence<byte>.Empty, Options(lastTimestamp));
                if (gap.Status == StoreStatus.Stored)
                {
                    store.Remove(gap.Sequence);
                }
                else
                {
                    store.Skip();
                }
            }
        }
    }
}
