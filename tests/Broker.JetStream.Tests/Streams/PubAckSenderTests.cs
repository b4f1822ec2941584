using Broker.JetStream.Internal.Api;
using Broker.Abstractions;
using Broker.JetStream.Internal.Streams;
using Broker.Storage.FileStore;
using Microsoft.Extensions.Logging.Abstractions;
using static Broker.JetStream.Tests.Streams.StreamTestKit;

namespace Broker.JetStream.Tests.Streams;

/// <summary>Pub acks as nats-server writes them, sent to the publisher's reply subject.</summary>
public class PubAckSenderTests
{
    [Theory(Timeout = 10_000)]
    [InlineData(null, false, """{"stream":"S","seq":42}""")]
    [InlineData(null, true, """{"stream":"S","seq":42,"duplicate":true}""")]
    [InlineData("hub", false, """{"stream":"S","domain":"hub","seq":42}""")]
    public async Task An_ack_of_a_durable_message_is_sent_at_once(string? domain, bool duplicate, string expected)
    {
        var store = await MemoryStoreAsync();
        for (var i = 0; i < 42; i++)
        {
            Store(store, "s.a");
        }

        var client = new RecordingBusClient();
        var acks = new PubAckSender(store, client, "S", domain, NullLogger.Instance);

        acks.Respond("_INBOX.1"u8, new IngestOutcome(null, 42, duplicate, true, 0));

        Assert.Equal([("_INBOX.1", "", expected)], client.Published);
    }

    [Fact(Timeout = 30_000)]
    public async Task Acks_held_for_durability_are_sent_in_order_once_fsynced()
    {
        // The file store's default policy: an ack waits for the fsync; each held ack keeps its own reply subject.
        var directory = Path.Combine(Path.GetTempPath(), "puback-" + Guid.NewGuid().ToString("N"));
        try
        {
            await using var store = await new FileStoreProvider(new FileStoreOptions()).CreateAsync(new StreamStoreConfig { Name = "S", Directory = directory, Subjects = ["s.>"], Metadata = "{}"u8.ToArray() });
            var client = new RecordingBusClient();
            var acks = new PubAckSender(store, client, "S", null, NullLogger.Instance);

            // One at a time (the recording client is not thread-safe): each ack waits for its fsync in turn, sent
            // with its own reply subject however long the one before it was.
            Store(store, "s.a");
            acks.Respond("_INBOX.a.long.reply.subject.1"u8, new IngestOutcome(null, 1, false, true, 0));
            await WaitForAcksAsync(client, 1);
            Store(store, "s.a");
            acks.Respond("_I.2"u8, new IngestOutcome(null, 2, true, true, 0));
            await WaitForAcksAsync(client, 2);

            Assert.Equal(
                [
                    ("_INBOX.a.long.reply.subject.1", "", """{"stream":"S","seq":1}"""),
                    ("_I.2", "", """{"stream":"S","seq":2,"duplicate":true}"""),
                ],
                client.Published);
        }
        finally
        {
            if (Directory.Exists(directory))
            {
                Directory.Delete(directory, recursive: true);
            }
        }
    }

    private static async Task WaitForAcksAsync(RecordingBusClient client, int count)
    {
        var deadline = DateTime.UtcNow.AddSeconds(20);
        while (client.Published.Count < count && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }
    }

    [Fact(Timeout = 10_000)]
    public async Task An_error_is_sent_with_the_stream_and_sequence_zero()
    {
        var client = new RecordingBusClient();
        var acks = new PubAckSender(await MemoryStoreAsync(), client, "S", null, NullLogger.Instance);

        acks.Respond("_INBOX.1"u8, new IngestOutcome(ApiErrors.StreamWrongLastSequence(3), 0, false, true, 0));

        Assert.Equal([("_INBOX.1", "", """{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"},"stream":"S","seq":0}""")], client.Published);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_buffer_too_small_for_the_ack_is_replaced()
    {
        var acks = new PubAckSender(await MemoryStoreAsync(), new RecordingBusClient(), new string('s', 600), null, NullLogger.Instance);

        var length = acks.FormatAck(new byte[16], ulong.MaxValue, duplicate: true);

        Assert.Equal(10 + 602 + 7 + 20 + 17 + 1, length);
    }
}
