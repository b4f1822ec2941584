using System.Collections.Concurrent;
using System.IO.Pipelines;
using Broker.Abstractions;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// Output pipes lent to <see cref="SocketOutputWriter"/>s for as long as they have bytes to send: a connection with
/// nothing queued holds none (issue 25). The pipes are made with the listener's output options
/// (<see cref="TransportSettings.CreateOutputPipeOptions"/>), so backpressure is the same as a connection's own pipe.
/// A returned pipe is reset (its segments are back in their pool); at most <see cref="MaxIdle"/> are kept.
/// </summary>
internal sealed class OutputPipePool
{
    /// <summary>The most idle pipes kept: enough for the connections that send at the same moment on a few cores.</summary>
    public const int MaxIdle = 256;

    private readonly ConcurrentQueue<Pipe> idle = new();
    private readonly PipeOptions options;
    private int count;

    private OutputPipePool(TransportSettings settings, PipeScheduler scheduler)
    {
        Settings = settings;
        Scheduler = scheduler;
        options = settings.CreateOutputPipeOptions(scheduler);
    }

    // The pool of the last settings seen: a listener's connections share its settings instance, so they share one
    // pool; a different settings instance or scheduler replaces the entry (its pipes are then collected).
    private static OutputPipePool? last;

    private TransportSettings Settings { get; }

    private PipeScheduler Scheduler { get; }

    /// <summary>The pool for a listener's settings and send scheduler.</summary>
    public static OutputPipePool For(TransportSettings settings, PipeScheduler scheduler)
    {
        var cached = Volatile.Read(ref last);
        if (cached is not null && ReferenceEquals(cached.Settings, settings) && ReferenceEquals(cached.Scheduler, scheduler))
        {
            return cached;
        }

        var made = new OutputPipePool(settings, scheduler);
        Volatile.Write(ref last, made);
        return made;
    }

    public Pipe Rent()
    {
        if (idle.TryDequeue(out var pipe))
        {
            Interlocked.Decrement(ref count);
            return pipe;
        }

        return new Pipe(options);
    }

    /// <summary>Takes back a pipe whose reader and writer are both completed.</summary>
    public void Return(Pipe pipe)
    {
        pipe.Reset();
        if (Interlocked.Increment(ref count) <= MaxIdle)
        {
            idle.Enqueue(pipe);
        }
        else
        {
            Interlocked.Decrement(ref count);
        }
    }
}
