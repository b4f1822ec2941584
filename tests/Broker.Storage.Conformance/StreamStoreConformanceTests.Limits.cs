using Broker.Abstractions;
using Xunit;

namespace Broker.Storage.Conformance;

/// <summary>Limits the store enforces: messages, bytes, per subject, age, under both discard policies.</summary>
public abstract partial class StreamStoreConformanceTests
{
    [Fact(Timeout = Timeout)]
    public async Task MaxMessages_with_discard_old_removes_the_oldest()
    {
        var store = await CreateAsync(NewConfig() with { MaxMessages = 3 });
        StoreMany(store, "foo.a", 5);

        var state = store.GetState();
        Assert.Equal(3UL, state.Messages);
        Assert.Equal(3UL, state.FirstSequence);
        Assert.Equal(5UL, state.LastSequence);
        Assert.Equal(LoadStatus.NotFound, store.Load(2, new StoredMessage()));
    }

    [Fact(Timeout = Timeout)]
    public async Task MaxMessages_with_discard_new_refuses_the_newest()
    {
        var store = await CreateAsync(NewConfig() with { MaxMessages = 2, Discard = DiscardPolicy.New });
        StoreMany(store, "foo.a", 2);
        var refused = Store(store, "foo.a", "x");

        Assert.Equal(new StoreResult(StoreStatus.MaxMessages, 0, 0), refused);
        Assert.Equal(2UL, store.GetState().LastSequence);
        Assert.Equal(StoreStatus.MaxMessages, Store(store, "foo.a", "y").Status);
    }

    [Fact(Timeout = Timeout)]
    public async Task MaxBytes_with_discard_old_keeps_the_stream_under_the_limit()
    {
        var config = NewConfig();
        var store = await CreateAsync(config with { MaxBytes = 1000 });
        for (var i = 0; i < 100; i++)
        {
            Store(store, "foo.a", new string('x', 50));
        }

        var state = store.GetState();
        Assert.True(state.Bytes <= 1000, $"bytes {state.Bytes} over the limit");
        Assert.True(state.Messages > 0);
        Assert.Equal(100UL, state.LastSequence);
        Assert.Equal(state.LastSequence - state.Messages + 1, state.FirstSequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task MaxBytes_with_discard_new_refuses_a_message_that_does_not_fit()
    {
        var store = await CreateAsync(NewConfig() with { MaxBytes = 200, Discard = DiscardPolicy.New });
        Assert.True(Store(store, "foo.a", new string('x', 100)).IsStored);
        var refused = Store(store, "foo.a", new string('x', 150));

        Assert.Equal(StoreStatus.MaxBytes, refused.Status);
        Assert.Equal(1UL, store.GetState().Messages);
    }

    [Fact(Timeout = Timeout)]
    public async Task MaxMessagesPerSubject_keeps_the_newest_of_each_subject()
    {
        var store = await CreateAsync(NewConfig() with { MaxMessagesPerSubject = 2 });
        Store(store, "foo.a", "a1");
        Store(store, "foo.b", "b1");
        Store(store, "foo.a", "a2");
        Store(store, "foo.a", "a3");
        Store(store, "foo.b", "b2");
        Store(store, "foo.a", "a4");

        var subjects = store.GetSubjectsState("");
        Assert.Equal(new SubjectState(2, 4, 6), subjects["foo.a"]);
        Assert.Equal(new SubjectState(2, 2, 5), subjects["foo.b"]);
        Assert.Equal(4UL, store.GetState().Messages);

        var message = new StoredMessage();
        Assert.Equal(LoadStatus.NotFound, store.Load(1, message));
        Assert.Equal(LoadStatus.NotFound, store.Load(3, message));
        Assert.Equal(LoadStatus.Found, store.LoadLast("foo.a"u8, message));
        Assert.Equal("a4", Text(message.Payload));
    }

    [Fact(Timeout = Timeout)]
    public async Task A_history_of_one_replaces_each_subjects_message_as_a_key_value_bucket_does()
    {
        var store = await CreateAsync(NewConfig() with { MaxMessagesPerSubject = 1 });
        for (var round = 0; round < 3; round++)
        {
            for (var key = 0; key < 10; key++)
            {
                Store(store, "foo.k" + key, $"v{round}");
            }
        }

        var state = store.GetState();
        Assert.Equal(10UL, state.Messages);
        Assert.Equal(21UL, state.FirstSequence);
        Assert.Equal(10, state.SubjectCount);
        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.LoadLast("foo.k3"u8, message));
        Assert.Equal("v2", Text(message.Payload));
        Assert.Equal(24UL, message.Sequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task Discard_new_per_subject_refuses_a_full_subject_and_accepts_others()
    {
        var store = await CreateAsync(NewConfig() with { MaxMessagesPerSubject = 1, Discard = DiscardPolicy.New, DiscardNewPerSubject = true });
        Assert.True(Store(store, "foo.a", "1").IsStored);
        Assert.Equal(StoreStatus.MaxMessagesPerSubject, Store(store, "foo.a", "2").Status);
        Assert.True(Store(store, "foo.b", "1").IsStored);
    }

    [Fact(Timeout = Timeout)]
    public async Task Discard_new_at_the_per_subject_limit_replaces_instead_of_refusing()
    {
        // nats-server: at max_msgs with the subject at its own limit, the append replaces that subject's oldest.
        var store = await CreateAsync(NewConfig() with { MaxMessages = 2, MaxMessagesPerSubject = 1, Discard = DiscardPolicy.New });
        Assert.True(Store(store, "foo.a", "1").IsStored);
        Assert.True(Store(store, "foo.b", "1").IsStored);
        Assert.True(Store(store, "foo.a", "2").IsStored);
        Assert.Equal(StoreStatus.MaxMessages, Store(store, "foo.c", "1").Status);
        Assert.Equal(2UL, store.GetState().Messages);
    }

    [Fact(Timeout = Timeout)]
    public async Task MaxAge_expires_old_messages_on_its_own()
    {
        // A second: a loaded machine still counts all five before they go.
        var store = await CreateAsync(NewConfig() with { MaxAge = TimeSpan.FromSeconds(1) });
        StoreMany(store, "foo.a", 5);
        Assert.Equal(5UL, store.GetState().Messages);

        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (store.GetState().Messages > 0 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50);
        }

        var state = store.GetState();
        Assert.Equal(0UL, state.Messages);
        Assert.Equal(5UL, state.LastSequence);
        Assert.Equal(6UL, state.FirstSequence);
        Assert.Equal(6UL, Store(store, "foo.a", "new").Sequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task UpdateConfig_enforces_lower_limits_at_once()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "1");
        Store(store, "foo.a", "2");
        Store(store, "foo.b", "3");
        Store(store, "foo.a", "4");

        store.UpdateConfig(store.Config with { MaxMessagesPerSubject = 1 });
        Assert.Equal(2UL, store.GetState().Messages);

        store.UpdateConfig(store.Config with { MaxMessages = 1 });
        var state = store.GetState();
        Assert.Equal(1UL, state.Messages);
        Assert.Equal(4UL, state.FirstSequence);
        Assert.Equal(1, store.Config.MaxMessages);
    }
}
