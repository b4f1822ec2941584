using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.Storage.FileStore;

namespace Broker.Benchmarks.Storage;

/// <summary>
/// A file stream for the storage benchmarks on a real temporary directory, at most 200,000 messages kept (discard old)
/// so a long run stays bounded. Setup appends 300,000 messages of 128 B, past the limit by about two 8 MiB blocks, so
/// what the benchmarks measure is the steady state of a bounded stream: blocks roll, the oldest are removed, their
/// buffers are reused. Loads walk the recent messages into one reused message.
/// </summary>
internal sealed class FileStoreBenchmarkStore : IDisposable
{
    public static readonly byte[] Subject = "bench.orders.new"u8.ToArray();

    private readonly string directory = Path.Combine(Path.GetTempPath(), "filestore-bench-" + Guid.NewGuid().ToString("N"));
    /// <summary>Messages appended by the setup.</summary>
    public const int Prefill = 300_000;

    private readonly StoredMessage message = new();
    private ulong next;

    public FileStoreBenchmarkStore(FileStoreOptions options, Func<int, byte[]>? subjectOf = null)
    {
        Store = new FileStoreProvider(options).CreateAsync(new StreamStoreConfig
        {
            Name = "BENCH",
            Directory = Path.Combine(directory, "jetstream", "$G", "streams", "BENCH"),
            MaxMessages = 200_000,
            Metadata = Encoding.UTF8.GetBytes("{}"),
        }).AsTask().GetAwaiter().GetResult();
        Payload = new ReadOnlySequence<byte>(new byte[128]);
        for (var i = 0; i < Prefill; i++)
        {
            Store.Store(subjectOf?.Invoke(i) ?? Subject, ReadOnlySequence<byte>.Empty, Payload);
        }

        Store.FlushAsync().AsTask().GetAwaiter().GetResult();
    }

    public IStreamStore Store { get; }

    public ReadOnlySequence<byte> Payload { get; }

    public long Append() => (long)Store.Store(Subject, ReadOnlySequence<byte>.Empty, Payload).Sequence;

    /// <summary>Loads <paramref name="count"/> messages by sequence among the last 10,000.</summary>
    public long LoadRecent(int count)
    {
        var state = Store.GetState();
        long total = 0;
        for (var i = 0; i < count; i++)
        {
            if (next < state.FirstSequence || next > state.LastSequence)
            {
                next = Math.Max(state.FirstSequence, state.LastSequence - 10_000);
            }

            if (Store.Load(next++, message) == LoadStatus.Found)
            {
                total += message.Payload.Length;
            }
        }

        return total;
    }

    /// <summary>Loads the next <paramref name="count"/> messages of <paramref name="subject"/>, wrapping at the end.</summary>
    public long LoadNext(ReadOnlySpan<byte> subject, int count)
    {
        var state = Store.GetState();
        long total = 0;
        for (var i = 0; i < count; i++)
        {
            if (next < state.FirstSequence || next > state.LastSequence)
            {
                next = state.FirstSequence;
            }

            if (Store.LoadNext(subject, next, message, out var found) == LoadStatus.Found)
            {
                total += message.Payload.Length;
                next = found + 1;
            }
            else
            {
                next = state.FirstSequence;
            }
        }

        return total;
    }

    public void Dispose()
    {
        Store.DisposeAsync().AsTask().GetAwaiter().GetResult();
        Directory.Delete(directory, recursive: true);
    }
}
