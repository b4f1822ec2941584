using System.Text;
using BenchmarkDotNet.Attributes;
using Broker.Benchmarks.Embedded;
using Broker.Core;
using Broker.Core.Internal;
using Broker.Core.Internal.Subscriptions;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Benchmarks.Routing;

/// <summary>
/// Subject index lookups against an index of about 1,500 subscriptions (literal, wildcard and queue): published
/// subjects that hit the match cache (the steady state of a running broker, 0 B/op) and subjects never seen
/// before (a trie walk plus a cache store, the cost of a first publish to a subject).
/// </summary>
[MemoryDiagnoser]
public class SubListBenchmarks
{
    /// <summary>Lookups in one benchmark invocation.</summary>
    public const int Batch = 256;

    // Distinct never-repeating subjects for the miss benchmark: far more than the cache keeps (1,024).
    private const int MissSubjects = 1 << 16;

    private SubList subList = null!;
    private byte[][] literalSubjects = [];
    private byte[][] wildcardSubjects = [];
    private byte[][] queueSubjects = [];
    private byte[][] missSubjects = [];
    private int nextMiss;

    [GlobalSetup]
    public void Setup()
    {
        var core = new BrokerCore(new BrokerOptions(), NullLoggerFactory.Instance);
        var owner = new BenchPublisher(core);
        subList = core.Accounts.Global.SubList;
        var sid = 0;
        void Add(string subject, string? queue = null)
        {
            var subscription = new Subscription(owner, Bytes(subject), queue is null ? null : Bytes(queue), Bytes((++sid).ToString(System.Globalization.CultureInfo.InvariantCulture)));
            if (!subList.Insert(subscription))
            {
                throw new InvalidOperationException($"Invalid subject {subject}.");
            }
        }

        for (var i = 0; i < 1000; i++)
        {
            Add($"bench.literal.{i}");
        }

        Add("bench.wild.*.data");
        Add("bench.wild.>");
        for (var i = 0; i < 100; i++)
        {
            Add($"bench.wild.{i}.data");
            for (var member = 0; member < 4; member++)
            {
                Add($"bench.queue.{i}", "workers");
            }
        }

        literalSubjects = Subjects(16, i => $"bench.literal.{i * 61}");
        wildcardSubjects = Subjects(16, i => $"bench.wild.{i * 6}.data");
        queueSubjects = Subjects(16, i => $"bench.queue.{i * 6}");
        missSubjects = Subjects(MissSubjects, i => $"bench.wild.x{i}.data");

        // Fill the cache for the hit benchmarks.
        MatchLiteral();
        MatchWildcard();
        MatchQueue();
    }

    /// <summary>A literal subscription, found in the cache.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long MatchLiteral() => MatchAll(literalSubjects);

    /// <summary>One literal and two wildcard subscriptions (<c>*</c> and <c>&gt;</c>), found in the cache.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long MatchWildcard() => MatchAll(wildcardSubjects);

    /// <summary>A queue group of four members, found in the cache.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long MatchQueue() => MatchAll(queueSubjects);

    /// <summary>Subjects not in the cache: a trie walk that matches two wildcards, a new result, a cache store.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long MatchCacheMiss()
    {
        long found = 0;
        for (var i = 0; i < Batch; i++)
        {
            var result = subList.Match(missSubjects[nextMiss]);
            nextMiss = (nextMiss + 1) & (MissSubjects - 1);
            found += result.Plain.Length;
        }

        return found;
    }

    private long MatchAll(byte[][] subjects)
    {
        long found = 0;
        for (var i = 0; i < Batch; i++)
        {
            var result = subList.Match(subjects[i & 15]);
            found += result.Plain.Length + result.Queues.Length;
        }

        return found;
    }

    private static byte[] Bytes(string text) => Encoding.ASCII.GetBytes(text);

    private static byte[][] Subjects(int count, Func<int, string> name) => [.. Enumerable.Range(0, count).Select(i => Bytes(name(i)))];
}
