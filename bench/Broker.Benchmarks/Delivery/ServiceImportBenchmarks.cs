using System.Buffers;
using BenchmarkDotNet.Attributes;
using Broker.Benchmarks.Embedded;
using Broker.Core;
using Broker.Core.Auth;
using Broker.Core.Internal;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Benchmarks.Delivery;

/// <summary>
/// A request through a service import and its response: a producer of account I publishes <c>svc.bench</c> with the
/// reply <c>_INBOX.bench</c>; the import forwards it to account E's responder with a route back (<c>_R_.xxxxxx.yyyyyy</c>)
/// and the <c>Nats-Request-Info</c> header; a producer of E publishes the response to that route, which delivers it to
/// the requester's NATS client in I and removes the route (a singleton export). One operation is the request and its
/// response. The route (its reply, its entry) and the header allocate per request, as nats-server's do: a stated budget.
/// The mapped case goes through an import with a wildcard <c>to</c> (I's <c>m.bench</c> is M's <c>msvc.bench</c>) into
/// an exporter with mappings (M maps <c>msvc.bench</c> to <c>mapped.bench</c>, where its responder is): the transformed
/// and the mapped subject are written into the forwarding producer's own buffers, so it allocates what the plain case does.
/// </summary>
[MemoryDiagnoser]
public class ServiceImportBenchmarks
{
    /// <summary>Requests between two flushes: one simulated read of the producer's socket.</summary>
    public const int Batch = 64;

    private static readonly byte[] Subject = "svc.bench"u8.ToArray();
    private static readonly byte[] MappedSubject = "m.bench"u8.ToArray();
    private static readonly byte[] Inbox = "_INBOX.bench"u8.ToArray();

    private EmbeddedBroker broker = null!;
    private BenchPublisher requester = null!;
    private BenchPublisher answerer = null!;
    private BenchPublisher mappedAnswerer = null!;
    private ReplyRecorder responder = null!;
    private ReplyRecorder mappedResponder = null!;
    private ReadOnlySequence<byte> payload;

    [GlobalSetup]
    public void Setup()
    {
        broker = new EmbeddedBroker(Options());
        broker.ConnectAs("i", headers: true, "SUB _INBOX.bench 1");
        broker.Core.Accounts.TryGet("I", out var importer);
        broker.Core.Accounts.TryGet("E", out var exporter);
        requester = new BenchPublisher(broker.Core, importer);
        answerer = new BenchPublisher(broker.Core, exporter);
        responder = new ReplyRecorder(broker.Core, exporter!);
        responder.Subscribe(Subject);
        broker.Core.Accounts.TryGet("M", out var mapped);
        mappedAnswerer = new BenchPublisher(broker.Core, mapped);
        mappedResponder = new ReplyRecorder(broker.Core, mapped!);
        mappedResponder.Subscribe("mapped.bench"u8.ToArray());
        payload = new ReadOnlySequence<byte>(new byte[128]);
    }

    [GlobalCleanup]
    public void Cleanup() => broker.DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>A 128-byte request through the import and its 128-byte response back to the requester's inbox.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long RequestThroughServiceImport128() => Requests(Subject, answerer, responder);

    /// <summary>
    /// A 128-byte request through the import with a wildcard <c>to</c> into M's mappings, and its 128-byte response
    /// back to the requester's inbox.
    /// </summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long RequestThroughImportIntoMappings128() => Requests(MappedSubject, mappedAnswerer, mappedResponder);

    // A batch of requests on the subject, each answered at once by the exporter's producer to the reply its responder got.
    private long Requests(byte[] subject, BenchPublisher exporterPublisher, ReplyRecorder exporterResponder)
    {
        for (var i = 0; i < Batch; i++)
        {
            requester.Publish(subject, Inbox, ReadOnlySequence<byte>.Empty, payload);
            exporterPublisher.Publish(exporterResponder.Reply, default, ReadOnlySequence<byte>.Empty, payload);
        }

        requester.FlushPending();
        exporterPublisher.FlushPending();
        return broker.DrainAll() + exporterResponder.TakeCount();
    }

    /// <summary>Routes back still waiting in the exporters (0 once every request was answered).</summary>
    internal int WaitingRoutes() => responder.Account.Responses.Count + mappedResponder.Account.Responses.Count;

    /// <summary>The subject the mapped case's responder last got its request on.</summary>
    internal string MappedRequestSubject() => mappedResponder.LastSubject;

    private static BrokerOptions Options()
    {
        var options = new BrokerOptions { NoSystemAccount = true };
        options.Accounts.Add(new AccountOptions
        {
            Name = "E",
            Exports = new AccountExportOptions { Services = [new ServiceExportOptions { Subject = "svc.>" }] },
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "M",
            Exports = new AccountExportOptions { Services = [new ServiceExportOptions { Subject = "msvc.>" }] },
            Mappings = [new MappingOptions { Source = "msvc.bench", Destinations = [new MappingDestinationOptions { Subject = "mapped.bench" }] }],
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "I",
            Users = [new UserOptions { User = "i", Password = "i" }],
            Imports = new AccountImportOptions
            {
                Services =
                [
                    new ServiceImportOptions { Account = "E", Subject = "svc.>" },
                    new ServiceImportOptions { Account = "M", Subject = "msvc.>", To = "m.>" },
                ],
            },
        });
        return options;
    }

    /// <summary>The responder: an in-process subscriber of E that keeps the reply of the last request it got.</summary>
    private sealed class ReplyRecorder(BrokerCore server, Account account) : ClientBase(server, ClientKind.Client, account)
    {
        private readonly byte[] reply = new byte[64];
        private int replyLength;
        private long count;
        private byte[] lastSubject = [];

        public ReadOnlySpan<byte> Reply => reply.AsSpan(0, replyLength);

        public string LastSubject => System.Text.Encoding.ASCII.GetString(lastSubject);

        public override bool IsClosed => false;

        public void Subscribe(byte[] subject) => AddSubscription(new Subscription(this, subject, null, "1"u8.ToArray()), 0);

        public long TakeCount()
        {
            var taken = count;
            count = 0;
            return taken;
        }

        public override void Deliver(ClientBase producer, Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
        {
            replyTo.CopyTo(reply);
            replyLength = replyTo.Length;
            count++;
            if (!subject.SequenceEqual(lastSubject))
            {
                lastSubject = subject.ToArray();
            }
        }
    }
}
