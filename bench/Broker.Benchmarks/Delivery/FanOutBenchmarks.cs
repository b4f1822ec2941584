using System.Buffers;
using BenchmarkDotNet.Attributes;
using Broker.Benchmarks.Embedded;
using Broker.Core;
using Broker.Core.Auth;

namespace Broker.Benchmarks.Delivery;

/// <summary>
/// The publish path end to end inside the broker: a producer routes a 128-byte message (match, per-subscriber
/// MSG formatting into the output pipe, deferred flush once per batch) to real <c>NatsClient</c>s over in-memory
/// connections, whose output the benchmark drains as a socket send loop would. One operation is one published
/// message, delivered to every subscriber (or to one member of the queue group). Steady state allocates nothing.
/// </summary>
/// <remarks>
/// The same subscribers exist in a second setting: account <c>I</c> imports <c>bench.&gt;</c> from account <c>E</c> with
/// the prefix <c>imp</c>, so a publish in <c>E</c> reaches them through their shadow subscriptions under
/// <c>imp.bench.fanout</c>, also without allocating. The plain rows run in <c>$G</c> (anonymous clients, through
/// <c>no_auth_user</c>), untouched by the accounts.
/// </remarks>
[MemoryDiagnoser]
public class FanOutBenchmarks
{
    /// <summary>Messages published between two flushes: one simulated read of the producer's socket.</summary>
    public const int Batch = 64;

    private static readonly byte[] Subject = "bench.fanout"u8.ToArray();
    private static readonly byte[] QueueSubject = "bench.work"u8.ToArray();

    private EmbeddedBroker broker = null!;
    private BenchPublisher importExporter = null!;
    private ReadOnlySequence<byte> payload;

    [Params(1, 4, 16)]
    public int Subscribers { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        broker = new EmbeddedBroker(Options());
        for (var i = 0; i < Subscribers; i++)
        {
            broker.Connect(headers: false, "SUB bench.fanout 1", "SUB bench.work workers 2");
            broker.ConnectAs("i", headers: false, "SUB imp.bench.fanout 1");
        }

        broker.Core.Accounts.TryGet("E", out var exporter);
        importExporter = new BenchPublisher(broker.Core, exporter);

        payload = new ReadOnlySequence<byte>(new byte[128]);
    }

    [GlobalCleanup]
    public void Cleanup() => broker.DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>Every subscriber receives each message.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long Publish128() => PublishBatch(Subject);

    /// <summary>Every subscriber of account I receives each message published in account E, through the stream import.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long PublishThroughStreamImport128()
    {
        for (var i = 0; i < Batch; i++)
        {
            importExporter.Publish(Subject, default, ReadOnlySequence<byte>.Empty, payload);
        }

        importExporter.FlushPending();
        return broker.DrainAll();
    }

    /// <summary>One member of a queue group (of <see cref="Subscribers"/> members) receives each message.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long PublishToQueueGroup128() => PublishBatch(QueueSubject);

    // $G for anonymous clients, and the exporting and importing accounts.
    private static BrokerOptions Options()
    {
        var options = new BrokerOptions();
        options.Authorization.Users.Add(new UserOptions { User = "g", Password = "g" });
        options.Authorization.NoAuthUser = "g";
        options.Accounts.Add(new AccountOptions
        {
            Name = "E",
            Exports = new AccountExportOptions { Streams = [new StreamExportOptions { Subject = "bench.>" }] },
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "I",
            Users = [new UserOptions { User = "i", Password = "i" }],
            Imports = new AccountImportOptions { Streams = [new StreamImportOptions { Account = "E", Subject = "bench.>", Prefix = "imp" }] },
        });
        return options;
    }

    private long PublishBatch(byte[] subject)
    {
        var publisher = broker.Publisher;
        for (var i = 0; i < Batch; i++)
        {
            publisher.Publish(subject, default, ReadOnlySequence<byte>.Empty, payload);
        }

        publisher.FlushPending();
        return broker.DrainAll();
    }
}
