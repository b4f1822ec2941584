using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;
using static Broker.JetStream.Tests.Streams.StreamTestKit;

namespace Broker.JetStream.Tests.Streams;

/// <summary>Get requests: what is loaded, and direct get's replies (the message with its headers, or a status).</summary>
public class DirectGetTests
{
    private static async Task<(IStreamStore Store, RecordingBusClient Client, DirectGet Get)> DirectGetAsync()
    {
        var store = await MemoryStoreAsync();
        Store(store, "s.a");
        Store(store, "s.b", "X: 1");
        Store(store, "s.a");
        var client = new RecordingBusClient();
        return (store, client, new DirectGet(store, client, "S"u8.ToArray()));
    }

    [Theory(Timeout = 10_000)]
    [InlineData(2UL, null, null, LoadStatus.Found, 2UL)]
    [InlineData(0UL, "s.a", null, LoadStatus.Found, 3UL)]
    [InlineData(2UL, null, "s.a", LoadStatus.Found, 3UL)]
    [InlineData(9UL, null, null, LoadStatus.EndOfStream, 0UL)]
    public async Task A_get_loads_by_sequence_last_or_next_by_subject(ulong sequence, string? last, string? next, LoadStatus status, ulong found)
    {
        var (_, _, get) = await DirectGetAsync();
        var message = new StoredMessage();

        Assert.Equal(status, get.Get(new MessageGetRequest { Sequence = sequence, LastBySubject = last, NextBySubject = next }, message));

        if (status == LoadStatus.Found)
        {
            Assert.Equal(found, message.Sequence);
        }
    }

    [Fact(Timeout = 10_000)]
    public async Task A_direct_get_answers_with_the_message_and_its_stream_headers()
    {
        var (_, client, get) = await DirectGetAsync();

        get.OnRequest(new BusMessage("$JS.API.DIRECT.GET.S"u8, "_INBOX.1"u8, ReadOnlySequence<byte>.Empty, Bytes("""{"seq":2}""")));

        var (subject, headers, payload) = Assert.Single(client.Published);
        Assert.Equal("_INBOX.1", subject);
        Assert.StartsWith("NATS/1.0\r\nX: 1\r\nNats-Stream: S\r\nNats-Subject: s.b\r\nNats-Sequence: 2\r\nNats-Time-Stamp: ", headers, StringComparison.Ordinal);
        Assert.EndsWith("\r\n\r\n", headers, StringComparison.Ordinal);
        Assert.Equal("x", payload);
    }

    [Theory(Timeout = 10_000)]
    [InlineData("", "NATS/1.0 408 Empty Request\r\n\r\n")]
    [InlineData("{bad", "NATS/1.0 408 Malformed Request\r\n\r\n")]
    [InlineData("{}", "NATS/1.0 408 Empty Request\r\n\r\n")]
    [InlineData("""{"seq":1,"last_by_subj":"s.a"}""", "NATS/1.0 408 Bad Request\r\n\r\n")]
    [InlineData("""{"seq":9}""", "NATS/1.0 404 Message Not Found\r\n\r\n")]
    public async Task A_direct_get_that_cannot_be_served_is_answered_with_a_status(string body, string status)
    {
        var (_, client, get) = await DirectGetAsync();

        get.OnRequest(new BusMessage("$JS.API.DIRECT.GET.S"u8, "_INBOX.1"u8, ReadOnlySequence<byte>.Empty, Bytes(body)));
        get.OnRequest(new BusMessage("$JS.API.DIRECT.GET.S"u8, default, ReadOnlySequence<byte>.Empty, Bytes(body)));

        Assert.Equal([("_INBOX.1", status, "")], client.Published);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_direct_get_by_subject_answers_with_its_last_message_and_wants_no_body()
    {
        var (_, client, get) = await DirectGetAsync();

        get.OnLastBySubject(new BusMessage("$JS.API.DIRECT.GET.S.s.a"u8, "_INBOX.1"u8, ReadOnlySequence<byte>.Empty, ReadOnlySequence<byte>.Empty));
        get.OnLastBySubject(new BusMessage("$JS.API.DIRECT.GET.S.s.a"u8, "_INBOX.2"u8, ReadOnlySequence<byte>.Empty, Bytes("{}")));

        Assert.Equal(2, client.Published.Count);
        Assert.Contains("Nats-Sequence: 3\r\n", client.Published[0].Headers, StringComparison.Ordinal);
        Assert.Equal(("_INBOX.2", "NATS/1.0 408 Bad Request\r\n\r\n", ""), client.Published[1]);
    }
}
