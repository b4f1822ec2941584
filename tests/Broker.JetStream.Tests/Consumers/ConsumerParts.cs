using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;
using Broker.Storage.MemStore;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.JetStream.Tests.Consumers;

/// <summary>What the consumer's collaborators are built from in unit tests: a memory stream store, an outbox, interest.</summary>
internal static class ConsumerParts
{
    public static async Task<IStreamStore> StreamStoreAsync(params string[] subjects)
    {
        var store = await new MemoryStoreProvider().CreateAsync(new StreamStoreConfig { Name = "S", StorageType = MemoryStoreProvider.TypeName, Subjects = [">"] });
        foreach (var subject in subjects)
        {
            store.Store(Encoding.UTF8.GetBytes(subject), default, new System.Buffers.ReadOnlySequence<byte>("x"u8.ToArray()));
        }

        return store;
    }

    public static ConsumerEvents Events(ConsumerOutbox outbox, ISubjectInterest? interest = null) =>
        new("S", "C", interest, null, outbox, NullLogger.Instance, "$G");

    /// <summary>The control messages queued, as text: subject, then headers, then payload.</summary>
    public static List<string> Drain(ConsumerOutbox outbox)
    {
        var all = new List<string>();
        while (outbox.TryDequeue(out var message))
        {
            all.Add(Encoding.UTF8.GetString(message.Subject) + " " + Encoding.UTF8.GetString(message.Headers) + (message.Payload is null ? "" : Encoding.UTF8.GetString(message.Payload)));
        }

        return all;
    }

    public static byte[] Bytes(string text) => Encoding.UTF8.GetBytes(text);
}

/// <summary>Interest a test switches on and off, by subject.</summary>
internal sealed class TestInterest : ISubjectInterest
{
    public HashSet<string> Listening { get; } = [];

    public bool HasInterest(ReadOnlySpan<byte> subject) => Listening.Contains(Encoding.UTF8.GetString(subject));
}

/// <summary>
/// A consumer as collaborators tested alone see it (stream S, consumer C): timer callbacks each run the action given
/// (none: nothing); the events and the outbox given (none: a throw); the interest given (none: everyone listens).
/// </summary>
internal sealed class TestTimers(Action? onPendingDue = null, Action? onFrontEndDue = null, ConsumerEvents? events = null, ConsumerOutbox? outbox = null, ISubjectInterest? interest = null) : IConsumerTimers
{
    public static TestTimers None { get; } = new();

    public ConsumerEvents Events => events ?? throw new InvalidOperationException("no events given");

    public string StreamName => "S";

    public string Name => "C";

    public ISubjectInterest? Interest => interest;

    public ConsumerOutbox Outbox => outbox ?? throw new InvalidOperationException("no outbox given");

    public void OnPendingDue() => onPendingDue?.Invoke();

    public void OnFrontEndDue() => onFrontEndDue?.Invoke();
}
