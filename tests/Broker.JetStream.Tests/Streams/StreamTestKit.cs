using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;
using Broker.Storage.MemStore;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.JetStream.Tests.Streams;

/// <summary>Memory stores, header blocks and a recording bus client for the stream collaborators' unit tests.</summary>
internal static class StreamTestKit
{
    public static async Task<IStreamStore> MemoryStoreAsync(RetentionPolicy retention = RetentionPolicy.Limits) =>
        await new MemoryStoreProvider().CreateAsync(new StreamStoreConfig { Name = "S", StorageType = MemoryStoreProvider.TypeName, Subjects = ["s.>"], Retention = retention });

    public static ReadOnlySequence<byte> Bytes(string text) => new(Encoding.UTF8.GetBytes(text));

    /// <summary>A NATS header block with the given lines, or empty.</summary>
    public static byte[] Headers(params string[] lines) =>
        lines.Length == 0 ? [] : Encoding.UTF8.GetBytes("NATS/1.0\r\n" + string.Concat(lines.Select(l => l + "\r\n")) + "\r\n");

    public static void Store(IStreamStore store, string subject, params string[] headerLines) =>
        store.Store(Encoding.UTF8.GetBytes(subject), new ReadOnlySequence<byte>(Headers(headerLines)), Bytes("x"));

    /// <summary>A stream on a memory store of an engine that is not started (no API), on the bus of a plain broker.</summary>
    /// <param name="interest">Whether a pull request's requester still listens (none: nobody does, requests are dropped).</param>
    public static async Task<(JetStreamAccount Account, MessageStream Stream)> StreamAsync(TestBroker broker, string directory, StreamConfig config, ISubjectInterest? interest = null)
    {
        var engine = new JetStreamEngine(new JetStreamOptions { StoreDirectory = directory }, broker.Bus, [new MemoryStoreProvider()], interest, NullLoggerFactory.Instance);
        var account = new JetStreamAccount(engine, BrokerAccount.GlobalName, AccountJetStreamLimits.Unlimited);
        var stream = await MessageStream.CreateAsync(account, engine.FindProvider(MemoryStoreProvider.TypeName)!, config);
        return (account, stream);
    }
}

/// <summary>
/// Tests over real consumers of one memory stream <c>S</c> (subjects <c>s.&gt;</c>) of an engine that is not started, on a
/// plain broker: made before each test, stopped (with the engine's pause timer) after.
/// </summary>
/// <param name="prefix">The temporary folder's name prefix.</param>
public abstract class MemoryStreamTests(string prefix) : IAsyncLifetime
{
    private readonly TempDirectory directory = new(prefix);
    private TestBroker broker = null!;

    internal JetStreamAccount Account { get; private set; } = null!;

    internal MessageStream Stream { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        broker = await TestBroker.StartAsync();
        (Account, Stream) = await StreamTestKit.StreamAsync(broker, directory.Path, StreamValidation.Normalize(new StreamConfig { Name = "S", Subjects = ["s.>"], Storage = "memory" }, 120_000_000_000));
    }

    public async Task DisposeAsync()
    {
        await Stream.StopAsync(deleteData: true);
        Account.Engine.Pauses.Dispose();
        await broker.DisposeAsync();
        directory.Dispose();
    }

    /// <summary>A durable consumer with explicit acks and the server's defaults (not registered with the stream, not started).</summary>
    internal Consumer NewConsumer(string name, string? filter = null, long? pauseUntil = null)
    {
        var config = new ConsumerConfig { Durable = name, AckPolicy = ConsumerAckPolicy.Explicit, FilterSubject = filter, PauseUntil = pauseUntil };
        ConsumerValidation.ApplyDefaults(config, 1000);
        return Consumer.Create(Stream, name, config);
    }
}

/// <summary>A bus client that records what it is asked to publish.</summary>
internal sealed class RecordingBusClient : IBusClient
{
    public List<(string Subject, string Headers, string Payload)> Published { get; } = [];

    public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) =>
        Published.Add((Encoding.UTF8.GetString(subject), Encoding.UTF8.GetString(headers.ToArray()), Encoding.UTF8.GetString(payload.ToArray())));

    public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) =>
        Published.Add((Encoding.UTF8.GetString(deliverAs), Encoding.UTF8.GetString(headers.ToArray()), Encoding.UTF8.GetString(payload.ToArray())));

    public IBusSubscription Subscribe(string subject, string? queueGroup, BusMessageHandler handler) => throw new NotSupportedException();

    public Task<BusReply> RequestAsync(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload, TimeSpan timeout, CancellationToken cancellationToken = default) => throw new NotSupportedException();

    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

    public string Account => "$G";

    public bool HasInterest(ReadOnlySpan<byte> subject) => false;

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;
}
