using System.Text.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Json;

/// <summary>
/// Creates the JSON metadata a restart needs first, on a thread-pool thread as soon as JetStream is configured: the
/// stored streams' metadata that recovery reads, and the stream info the first API answer writes.
/// </summary>
/// <remarks>
/// The source-generated context creates each property's metadata at the first use of its type, and that metadata is
/// generic code over primitive types (<c>JsonPropertyInfoValues&lt;T&gt;</c>, <c>JsonPropertyInfo&lt;T&gt;</c> over
/// <c>bool</c>, <c>int?</c>, <c>ulong</c>, our enums...) that no ReadyToRun image holds: about 330 methods compiled by
/// the JIT, 60-80 ms of CPU, on the start-up thread in the middle of recovery. Done here, that work runs on the second
/// core while the broker composes its services, binds its listeners and reads the stores (docs/benchmarks.md,
/// "startup: the first second and restart"). System.Text.Json's metadata caches are thread-safe; whichever thread
/// comes first creates an entry, and the other uses it.
/// </remarks>
internal static class JsonWarmUp
{
    private static int started;

    /// <summary>Starts the warm-up once per process; later calls do nothing.</summary>
    public static void Start()
    {
        if (Interlocked.Exchange(ref started, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static _ => Run(), null);
        }
    }

    private static void Run()
    {
        try
        {
            var config = new StreamConfig { Name = "warm-up", Subjects = ["warm-up"] };
            var metadata = JsonSerializer.SerializeToUtf8Bytes(new StoredStreamMetadata { Config = config }, JetStreamJson.Context.StoredStreamMetadata);
            JsonSerializer.Deserialize(metadata, JetStreamJson.Context.StoredStreamMetadata);
            JsonSerializer.SerializeToUtf8Bytes(new StreamInfoModel { Config = config, State = new StreamStateModel() }, JetStreamJson.Context.StreamInfoModel);
        }
#pragma warning disable CA1031 // Only a warm-up: whatever it meets, the real use meets again and reports.
        catch (Exception)
#pragma warning restore CA1031
        {
        }
    }
}
