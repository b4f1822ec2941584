using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Xunit;

namespace Broker.Storage.Conformance;

/// <summary>
/// The storage contract's conformance suite. Derive from it in a test project, override <see cref="CreateProvider"/>,
/// and every test runs against that store: what nats-server's <c>store_test.go</c> checks of both of its stores,
/// expressed over <see cref="IStreamStore"/> and <see cref="IConsumerStore"/>. Split by concern: appends and loads
/// (here), limits, removals, state queries, consumer state, durability and concurrency.
/// </summary>
public abstract partial class StreamStoreConformanceTests : IAsyncLifetime
{
    /// <summary>Generous: every test is short, and the suite may run beside others on a busy machine.</summary>
    protected const int Timeout = 30_000;

    private readonly List<IStreamStore> opened = [];

    /// <summary>A fresh folder for this test, deleted afterwards (durable stores keep their streams under it).</summary>
    protected string StoreDirectory { get; } = Path.Combine(Path.GetTempPath(), "store-conformance-" + Guid.NewGuid().ToString("N"));

    /// <summary>The provider under test.</summary>
    protected abstract IStreamStoreProvider CreateProvider();

    /// <summary>Whether the store keeps streams across a restart (recovery tests run only then).</summary>
    protected virtual bool IsDurable => false;

    /// <summary>
    /// Whether the store keeps a message expiring as the last of its subject until the subject expiry handler returns
    /// (the order contract 1.4's handler prefers; a store may also remove first and report after).
    /// </summary>
    protected virtual bool KeepsExpiredForMarker => false;

    /// <summary>The configuration of a test stream named <paramref name="name"/>, with its folder under <see cref="StoreDirectory"/>.</summary>
    protected StreamStoreConfig NewConfig(string name = "S") => new()
    {
        Name = name,
        StorageType = CreateProvider().StorageType,
        Directory = Path.Combine(StoreDirectory, "$G", "streams", name),
        Subjects = ["foo.>", "bar"],
    };

    /// <summary>Creates a store (disposed after the test).</summary>
    protected async Task<IStreamStore> CreateAsync(StreamStoreConfig? config = null)
    {
        var store = await CreateProvider().CreateAsync(config ?? NewConfig());
        opened.Add(store);
        return store;
    }

    public Task InitializeAsync()
    {
        Directory.CreateDirectory(StoreDirectory);
        return Task.CompletedTask;
    }

    public virtual async Task DisposeAsync()
    {
        foreach (var store in opened)
        {
            await store.DisposeAsync();
        }

        try
        {
            Directory.Delete(StoreDirectory, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    protected static StoreResult Store(IStreamStore store, string subject, string payload, string? headers = null) =>
        store.Store(
            Encoding.UTF8.GetBytes(subject),
            headers is null ? ReadOnlySequence<byte>.Empty : new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(headers)),
            new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(payload)));

    protected static void StoreMany(IStreamStore store, string subject, int count)
    {
        for (var i = 0; i < count; i++)
        {
            Assert.Equal(StoreStatus.Stored, Store(store, subject, "m" + i).Status);
        }
    }

    protected static string Text(ReadOnlyMemory<byte> bytes) => Encoding.UTF8.GetString(bytes.Span);

    protected static byte[] Bytes(string text) => Encoding.UTF8.GetBytes(text);

    /// <summary>The bytes the memory store accounts for one message, nats-server's formula (durable stores may count more).</summary>
    protected static ulong MemorySize(string subject, string payload, string? headers = null) =>
        (ulong)(Encoding.UTF8.GetByteCount(subject) + Encoding.UTF8.GetByteCount(payload) + (headers is null ? 0 : Encoding.UTF8.GetByteCount(headers)) + 16);

    [Fact(Timeout = Timeout)]
    public async Task Store_assigns_consecutive_sequences_and_non_decreasing_timestamps()
    {
        var store = await CreateAsync();
        var before = (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * 100;
        var first = Store(store, "foo.a", "one");
        var second = Store(store, "foo.b", "two");

        Assert.Equal(new StoreResult(StoreStatus.Stored, 1, first.Timestamp), first);
        Assert.Equal(2UL, second.Sequence);
        Assert.True(first.Timestamp >= before - 1_000_000_000, "timestamps are wall-clock nanoseconds since the Unix epoch");
        Assert.True(second.Timestamp >= first.Timestamp);

        var state = store.GetState();
        Assert.Equal(2UL, state.Messages);
        Assert.Equal(1UL, state.FirstSequence);
        Assert.Equal(2UL, state.LastSequence);
        Assert.Equal(first.Timestamp, state.FirstTimestamp);
        Assert.Equal(second.Timestamp, state.LastTimestamp);
        Assert.Equal(2, state.SubjectCount);
        Assert.Equal(0, state.DeletedCount);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_new_store_is_empty_with_zero_sequences()
    {
        var store = await CreateAsync();
        var state = store.GetState();
        Assert.Equal(0UL, state.Messages);
        Assert.Equal(0UL, state.Bytes);
        Assert.Equal(0UL, state.LastSequence);
        Assert.Equal(LoadStatus.EndOfStream, store.Load(1, new StoredMessage()));
        Assert.Equal(LoadStatus.NotFound, store.LoadLast(default, new StoredMessage()));
    }

    [Fact(Timeout = Timeout)]
    public async Task Load_copies_subject_headers_and_payload_into_the_callers_message()
    {
        var store = await CreateAsync();
        const string headers = "NATS/1.0\r\nA: b\r\n\r\n";
        var stored = Store(store, "foo.a", "payload", headers);
        Store(store, "bar", "");

        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.Load(1, message));
        Assert.Equal(1UL, message.Sequence);
        Assert.Equal(stored.Timestamp, message.Timestamp);
        Assert.Equal("foo.a", Text(message.Subject));
        Assert.Equal(headers, Text(message.Headers));
        Assert.Equal("payload", Text(message.Payload));

        // The same object is reused for the next load, and an empty payload stays empty.
        Assert.Equal(LoadStatus.Found, store.Load(2, message));
        Assert.Equal("bar", Text(message.Subject));
        Assert.True(message.Headers.IsEmpty);
        Assert.True(message.Payload.IsEmpty);
    }

    [Fact(Timeout = Timeout)]
    public async Task Loaded_messages_stay_valid_after_the_stream_changes()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "first");
        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.Load(1, message));

        store.Remove(1, secureErase: true);
        StoreMany(store, "foo.b", 50);

        Assert.Equal("first", Text(message.Payload));
        Assert.Equal("foo.a", Text(message.Subject));
    }

    [Fact(Timeout = Timeout)]
    public async Task Store_accepts_multi_segment_headers_and_payloads()
    {
        var store = await CreateAsync();
        var payload = Segmented("hello ", "segmented ", "world");
        var headers = Segmented("NATS/1.0\r\n", "X: 1\r\n\r\n");
        Assert.True(store.Store("foo.x"u8, headers, payload).IsStored);

        var message = new StoredMessage();
        store.Load(1, message);
        Assert.Equal("hello segmented world", Text(message.Payload));
        Assert.Equal("NATS/1.0\r\nX: 1\r\n\r\n", Text(message.Headers));
    }

    [Fact(Timeout = Timeout)]
    public async Task Load_tells_a_removed_message_from_one_past_the_end()
    {
        var store = await CreateAsync();
        StoreMany(store, "foo.a", 3);
        Assert.True(store.Remove(2));

        var message = new StoredMessage();
        Assert.Equal(LoadStatus.NotFound, store.Load(2, message));
        Assert.Equal(LoadStatus.EndOfStream, store.Load(4, message));
        Assert.Equal(LoadStatus.Found, store.Load(3, message));
    }

    [Fact(Timeout = Timeout)]
    public async Task LoadNext_finds_the_next_match_for_literal_wildcard_and_empty_filters()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "1");
        Store(store, "bar", "2");
        Store(store, "foo.b", "3");
        Store(store, "foo.a", "4");
        Store(store, "foo.c.d", "5");

        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.LoadNext("foo.a"u8, 2, message, out var scanned));
        Assert.Equal(4UL, message.Sequence);
        Assert.Equal(4UL, scanned);

        Assert.Equal(LoadStatus.Found, store.LoadNext("foo.*"u8, 1, message, out _));
        Assert.Equal(1UL, message.Sequence);
        Assert.Equal(LoadStatus.Found, store.LoadNext("foo.*"u8, 2, message, out _));
        Assert.Equal(3UL, message.Sequence);
        Assert.Equal(LoadStatus.Found, store.LoadNext("foo.>"u8, 5, message, out _));
        Assert.Equal(5UL, message.Sequence);
        Assert.Equal(LoadStatus.Found, store.LoadNext(default, 2, message, out _));
        Assert.Equal(2UL, message.Sequence);
        Assert.Equal(LoadStatus.Found, store.LoadNext(">"u8, 0, message, out _));
        Assert.Equal(1UL, message.Sequence);

        Assert.Equal(LoadStatus.EndOfStream, store.LoadNext("foo.*"u8, 5, message, out scanned));
        Assert.Equal(5UL, scanned);
        Assert.Equal(LoadStatus.EndOfStream, store.LoadNext("nope"u8, 1, message, out scanned));
        Assert.Equal(5UL, scanned);
        Assert.Equal(LoadStatus.EndOfStream, store.LoadNext(default, 6, message, out _));
    }

    [Fact(Timeout = Timeout)]
    public async Task LoadNext_skips_removed_messages()
    {
        var store = await CreateAsync();
        StoreMany(store, "foo.a", 5);
        store.Remove(2);
        store.Remove(3);

        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.LoadNext("foo.a"u8, 2, message, out _));
        Assert.Equal(4UL, message.Sequence);
        Assert.Equal(LoadStatus.Found, store.LoadNext(default, 2, message, out _));
        Assert.Equal(4UL, message.Sequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task LoadLast_returns_the_last_message_of_a_subject_or_filter()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "1");
        Store(store, "foo.b", "2");
        Store(store, "foo.a", "3");
        Store(store, "bar", "4");

        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.LoadLast("foo.a"u8, message));
        Assert.Equal(3UL, message.Sequence);
        Assert.Equal(LoadStatus.Found, store.LoadLast("foo.*"u8, message));
        Assert.Equal(3UL, message.Sequence);
        Assert.Equal(LoadStatus.Found, store.LoadLast(default, message));
        Assert.Equal(4UL, message.Sequence);
        Assert.Equal(LoadStatus.NotFound, store.LoadLast("foo.z"u8, message));

        // After the subject's last is removed, the one before it is the last.
        store.Remove(3);
        Assert.Equal(LoadStatus.Found, store.LoadLast("foo.a"u8, message));
        Assert.Equal(1UL, message.Sequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task Skip_uses_a_sequence_without_storing()
    {
        var store = await CreateAsync();
        Assert.Equal(1UL, store.Skip());
        var stored = Store(store, "foo.a", "x");
        Assert.Equal(2UL, stored.Sequence);
        Assert.Equal(3UL, store.Skip());

        var state = store.GetState();
        Assert.Equal(1UL, state.Messages);
        Assert.Equal(2UL, state.FirstSequence);
        Assert.Equal(3UL, state.LastSequence);
        Assert.Equal(4UL, Store(store, "foo.a", "y").Sequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task GetSequenceFromTime_finds_the_first_message_at_or_after_a_time()
    {
        var store = await CreateAsync();
        var first = Store(store, "foo.a", "1");
        await Task.Delay(5);
        var second = Store(store, "foo.a", "2");
        await Task.Delay(5);
        var third = Store(store, "foo.a", "3");

        Assert.Equal(1UL, store.GetSequenceFromTime(first.Timestamp - 1000));
        Assert.Equal(1UL, store.GetSequenceFromTime(first.Timestamp));
        Assert.Equal(2UL, store.GetSequenceFromTime(first.Timestamp + 1));
        Assert.Equal(3UL, store.GetSequenceFromTime(third.Timestamp));
        Assert.Equal(4UL, store.GetSequenceFromTime(third.Timestamp + 1));

        store.Remove(2);
        Assert.Equal(3UL, store.GetSequenceFromTime(second.Timestamp));
    }

    private static ReadOnlySequence<byte> Segmented(params string[] parts)
    {
        Segment? first = null;
        Segment? last = null;
        foreach (var part in parts)
        {
            var segment = new Segment(Encoding.UTF8.GetBytes(part), last);
            first ??= segment;
            last = segment;
        }

        return new ReadOnlySequence<byte>(first!, 0, last!, last!.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(byte[] data, Segment? previous)
        {
            Memory = data;
            if (previous is not null)
            {
                RunningIndex = previous.RunningIndex + previous.Memory.Length;
                previous.Next = this;
            }
        }
    }
}
