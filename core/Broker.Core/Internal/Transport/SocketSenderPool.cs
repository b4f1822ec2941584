using System.Collections.Concurrent;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// The socket connections' send operations, shared: a send loop rents one for each send and returns it when the send
/// completed, so a connection holds a <see cref="SocketSender"/> (a <c>SocketAsyncEventArgs</c>, about 280 B with
/// its state) only while its bytes move, not while it idles (issue 25; Kestrel's <c>SocketSenderPool</c> does the
/// same). At most <see cref="MaxRetained"/> idle senders are kept; beyond that a returned one is disposed.
/// </summary>
internal static class SocketSenderPool
{
    /// <summary>Idle senders kept at most: far more than sends can be in progress at once on this machine's cores.</summary>
    private const int MaxRetained = 1024;

    private static readonly ConcurrentQueue<SocketSender> Idle = new();
    private static int count;

    /// <summary>An idle sender, or a new one.</summary>
    public static SocketSender Rent()
    {
        if (Idle.TryDequeue(out var sender))
        {
            Interlocked.Decrement(ref count);
            return sender;
        }

        return new SocketSender();
    }

    /// <summary>Takes back a sender whose send completed successfully; a failed one is disposed by its renter instead.</summary>
    public static void Return(SocketSender sender)
    {
        sender.Reset();
        if (Interlocked.Increment(ref count) > MaxRetained)
        {
            Interlocked.Decrement(ref count);
            sender.Dispose();
            return;
        }

        Idle.Enqueue(sender);
    }
}
