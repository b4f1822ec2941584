using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;
using Microsoft.Extensions.Logging.Abstractions;
using static Broker.JetStream.Tests.Streams.StreamTestKit;

namespace Broker.JetStream.Tests.Streams;

/// <summary>The publish path's checks and the append, over a memory store, as nats-server's processJetStreamMsg answers.</summary>
public class MessageIngestTests
{
    private static readonly StreamConfig Config = new() { Name = "S", Subjects = ["s.>"], MaxMsgSize = -1, DuplicateWindow = 60_000_000_000 };

    private bool limitsExceeded;

    private async Task<(IStreamStore Store, MessageIngest Ingest)> IngestAsync(RetentionPolicy retention = RetentionPolicy.Limits, bool newStream = true, Action<IStreamStore>? before = null)
    {
        var store = await MemoryStoreAsync(retention);
        before?.Invoke(store);
        return (store, new MessageIngest(store, "S", "S"u8.ToArray(), new ConsumerRegistry(store), () => limitsExceeded, NullLogger.Instance, newStream));
    }

    private static IngestOutcome Append(MessageIngest ingest, string subject, StreamConfig? config = null, bool hasReply = true, params string[] headerLines)
    {
        var headers = Headers(headerLines);
        return ingest.Append(config ?? Config, Encoding.UTF8.GetBytes(subject), headers, new ReadOnlySequence<byte>(headers), Bytes("data"), hasReply);
    }

    [Fact(Timeout = 10_000)]
    public async Task Messages_are_stored_in_sequence_and_answered()
    {
        var (store, ingest) = await IngestAsync();

        Assert.Equal(new IngestOutcome(null, 1, false, true, 0, Stored: true), Append(ingest, "s.a"));
        Assert.Equal(new IngestOutcome(null, 2, false, false, 0, Stored: true), Append(ingest, "s.b", hasReply: false));
        Assert.Equal(new IngestOutcome(null, 3, false, false, 0, Stored: true), Append(ingest, "s.b", new StreamConfig { Name = "S", MaxMsgSize = -1, NoAck = true }));

        Assert.Equal(3UL, store.GetState().Messages);
        Assert.Equal(3UL, ingest.LastSequence);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_repeated_message_id_is_a_duplicate_of_the_original_sequence_and_not_stored()
    {
        var (store, ingest) = await IngestAsync();

        Append(ingest, "s.a", headerLines: "Nats-Msg-Id: m1");
        Append(ingest, "s.a");
        var again = Append(ingest, "s.a", headerLines: "Nats-Msg-Id: m1");

        Assert.Equal(new IngestOutcome(null, 1, true, true, 0), again);
        Assert.Equal(2UL, store.GetState().Messages);
    }

    [Fact(Timeout = 10_000)]
    public async Task The_expected_headers_are_checked_with_nats_servers_errors()
    {
        var (store, ingest) = await IngestAsync();
        Append(ingest, "s.a", headerLines: "Nats-Msg-Id: m1");
        Append(ingest, "s.b");

        Assert.Equal(ApiErrors.StreamNotMatch, Append(ingest, "s.a", headerLines: "Nats-Expected-Stream: OTHER").Error);
        Assert.Equal(ApiErrors.StreamWrongLastSequence(2), Append(ingest, "s.a", headerLines: "Nats-Expected-Last-Sequence: 1").Error);
        Assert.Equal(ApiErrors.StreamWrongLastSequence(1), Append(ingest, "s.a", headerLines: "Nats-Expected-Last-Subject-Sequence: 7").Error);
        Assert.Equal(ApiErrors.StreamWrongLastMessageId(""), Append(ingest, "s.a", headerLines: "Nats-Expected-Last-Msg-Id: m1").Error);
        Assert.Equal(2UL, store.GetState().Messages);

        Assert.Null(Append(ingest, "s.a", headerLines: ["Nats-Expected-Stream: S", "Nats-Expected-Last-Sequence: 2", "Nats-Expected-Last-Subject-Sequence: 1"]).Error);
        Assert.Null(Append(ingest, "s.c", headerLines: ["Nats-Expected-Last-Subject-Sequence: 0", "Nats-Msg-Id: m2"]).Error);
        Assert.Null(Append(ingest, "s.c", headerLines: "Nats-Expected-Last-Msg-Id: m2").Error);
    }

    [Fact(Timeout = 10_000)]
    public async Task After_a_restart_the_last_message_id_comes_from_the_store()
    {
        var (store, ingest) = await IngestAsync(newStream: false, before: s => Store(s, "s.a", "Nats-Msg-Id: before"));

        Assert.Null(Append(ingest, "s.a", headerLines: "Nats-Expected-Last-Msg-Id: before").Error);
        Assert.Equal(new IngestOutcome(null, 1, true, true, 0), Append(ingest, "s.a", headerLines: "Nats-Msg-Id: before"));
        Assert.Equal(2UL, store.GetState().Messages);
    }

    [Fact(Timeout = 10_000)]
    public async Task Sealed_sizes_limits_and_rollups_are_refused_as_nats_server_does()
    {
        var (store, ingest) = await IngestAsync();

        Assert.Equal(ApiErrors.StreamSealed, Append(ingest, "s.a", new StreamConfig { Name = "S", Sealed = true }).Error);
        Assert.Equal(ApiErrors.StreamMessageExceedsMaximum, Append(ingest, "s.a", new StreamConfig { Name = "S", MaxMsgSize = 3 }).Error);
        Assert.Equal(ApiErrors.StreamRollupFailed("rollup not permitted"), Append(ingest, "s.a", headerLines: "Nats-Rollup: sub").Error);
        var rollups = new StreamConfig { Name = "S", MaxMsgSize = -1, AllowRollup = true };
        Assert.Equal(ApiErrors.StreamRollupFailed("rollup value invalid: \"some\""), Append(ingest, "s.a", rollups, headerLines: "Nats-Rollup: some").Error);
        limitsExceeded = true;
        Assert.Equal(ApiErrors.InsufficientResources, Append(ingest, "s.a").Error);
        limitsExceeded = false;
        Assert.Equal(0UL, store.GetState().Messages);

        Assert.Equal(1, Append(ingest, "s.a", rollups, headerLines: "Nats-Rollup: sub").Rollup);
        Assert.Equal(2, Append(ingest, "s.a", rollups, headerLines: "Nats-Rollup: all").Rollup);
    }

    [Fact(Timeout = 10_000)]
    public async Task On_an_interest_stream_without_consumers_the_sequence_is_used_and_nothing_kept()
    {
        var (store, ingest) = await IngestAsync(RetentionPolicy.Interest);
        var interest = new StreamConfig { Name = "S", MaxMsgSize = -1, Retention = RetentionPolicy.Interest, DuplicateWindow = Config.DuplicateWindow };

        Assert.Equal(new IngestOutcome(null, 1, false, true, 0), Append(ingest, "s.a", interest, headerLines: "Nats-Msg-Id: m1"));
        Assert.Equal(new IngestOutcome(null, 1, true, true, 0), Append(ingest, "s.a", interest, headerLines: "Nats-Msg-Id: m1"));

        Assert.Equal(0UL, store.GetState().Messages);
        Assert.Equal(1UL, store.GetState().LastSequence);
    }
}
