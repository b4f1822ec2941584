using Broker.JetStream.Internal.Streams;
using static Broker.JetStream.Tests.Streams.StreamTestKit;

namespace Broker.JetStream.Tests.Streams;

/// <summary>The duplicate window: ids within the window find their sequence; expired ids do not and leave as new ones arrive.</summary>
public class DuplicateWindowTests
{
    private const long Minute = 60_000_000_000;

    [Fact]
    public void A_remembered_id_finds_its_sequence_and_another_id_finds_nothing()
    {
        var window = new DuplicateWindow(loaded: true);

        window.Remember("a", 5, Minute);
        window.Remember("b", 6, Minute);

        Assert.Equal(5UL, window.Find("a"u8, Minute));
        Assert.Equal(6UL, window.Find("b"u8, Minute));
        Assert.Null(window.Find("c"u8, Minute));
    }

    [Fact]
    public void Without_a_window_nothing_is_remembered_or_found()
    {
        var window = new DuplicateWindow(loaded: true);

        window.Remember("a", 5, 0);

        Assert.Equal(0, window.Count);
        window.Remember("b", 6, Minute);
        Assert.Null(window.Find("b"u8, 0));
    }

    [Fact]
    public void An_id_longer_than_the_stack_buffer_is_found()
    {
        var window = new DuplicateWindow(loaded: true);
        var id = new string('x', 1000);

        window.Remember(id, 9, Minute);

        Assert.Equal(9UL, window.Find(System.Text.Encoding.UTF8.GetBytes(id), Minute));
    }

    [Fact(Timeout = 10_000)]
    public async Task An_expired_id_is_not_found_and_leaves_when_a_new_one_arrives()
    {
        const long window = 20_000_000;
        var duplicates = new DuplicateWindow(loaded: true);
        duplicates.Remember("a", 1, window);

        await Task.Delay(100);

        Assert.Null(duplicates.Find("a"u8, window));
        Assert.Equal(1, duplicates.Count);
        duplicates.Remember("b", 2, window);
        Assert.Equal(1, duplicates.Count);
        // Looked up with a longer window: under load more than 20 ms can pass between the two calls, and "b" would
        // have expired in its turn (a flaky failure seen at load average 40).
        Assert.Equal(2UL, duplicates.Find("b"u8, Minute));
    }

    [Fact(Timeout = 10_000)]
    public async Task After_a_restart_the_window_is_refilled_from_the_store_once_with_the_last_id()
    {
        var store = await MemoryStoreAsync();
        Store(store, "s.1", "Nats-Msg-Id: one");
        Store(store, "s.2");
        Store(store, "s.3", "Nats-Msg-Id: three");
        var window = new DuplicateWindow(loaded: false);
        string? lastId = "stale";

        window.EnsureLoaded(store, Minute, 3, ref lastId);

        Assert.Equal("three", lastId);
        Assert.Equal(1UL, window.Find("one"u8, Minute));
        Assert.Equal(3UL, window.Find("three"u8, Minute));
        Store(store, "s.4", "Nats-Msg-Id: four");
        window.EnsureLoaded(store, Minute, 4, ref lastId);
        Assert.Null(window.Find("four"u8, Minute));
        Assert.Equal("three", lastId);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_new_stream_has_nothing_to_refill()
    {
        var store = await MemoryStoreAsync();
        Store(store, "s.1", "Nats-Msg-Id: one");
        var window = new DuplicateWindow(loaded: true);
        string? lastId = null;

        window.EnsureLoaded(store, Minute, 1, ref lastId);

        Assert.Null(lastId);
        Assert.Equal(0, window.Count);
    }
}
