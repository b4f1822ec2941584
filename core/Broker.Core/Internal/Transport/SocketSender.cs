using System.Buffers;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading.Tasks.Sources;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// A reusable, awaitable send operation, so a send allocates nothing, and a multi-segment buffer goes out in one
/// vectored send. Rented from <see cref="SocketSenderPool"/> for one send and returned after it, as Kestrel's socket
/// transport does: an idle connection holds none (issue 25).
/// </summary>
/// <remarks>
/// A send that completes asynchronously resumes the send loop on a thread-pool worker even when the runtime runs
/// socket completions on its epoll thread (<c>DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1</c>, which the host sets so
/// that a read is parsed where it arrived): otherwise that thread would go on to make every later send of this
/// connection itself (the send loop finds more output waiting), and the sends of a busy subscriber would stall the
/// reads of every other socket on that engine (pub/sub lost a quarter of its throughput that way).
/// </remarks>
internal sealed class SocketSender : SocketAsyncEventArgs, IValueTaskSource<int>, IThreadPoolWorkItem
{
    // Made at the first send of more than one segment: most connections never make one (issue 25).
    private List<ArraySegment<byte>>? segments;
    private ManualResetValueTaskSourceCore<int> source = new() { RunContinuationsAsynchronously = false };

    public SocketSender()
        : base(unsafeSuppressExecutionContextFlow: true)
    {
    }

    public ValueTask<int> SendAsync(Socket socket, in ReadOnlySequence<byte> buffers)
    {
        if (buffers.IsSingleSegment)
        {
            if (BufferList is not null)
            {
                BufferList = null;
            }

            SetBuffer(MemoryMarshal.AsMemory(buffers.First));
        }
        else
        {
            if (Buffer is not null || MemoryBuffer.Length > 0)
            {
                SetBuffer(null, 0, 0);
            }

            var segments = this.segments ??= [];
            segments.Clear();
            foreach (var memory in buffers)
            {
                segments.Add(AsSegment(memory));
            }

            BufferList = segments;
        }

        source.Reset();
        if (socket.SendAsync(this))
        {
            return new ValueTask<int>(this, source.Version);
        }

        return SocketError == SocketError.Success
            ? new ValueTask<int>(BytesTransferred)
            : ValueTask.FromException<int>(new SocketException((int)SocketError));
    }

    /// <summary>Forgets the buffers of the last send, so a pooled sender keeps no connection's memory alive.</summary>
    public void Reset()
    {
        if (BufferList is not null)
        {
            BufferList = null;
            segments?.Clear();
        }
        else if (Buffer is not null || MemoryBuffer.Length > 0)
        {
            SetBuffer(null, 0, 0);
        }
    }

    int IValueTaskSource<int>.GetResult(short token) => source.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => source.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => source.OnCompleted(continuation, state, token, flags);

    protected override void OnCompleted(SocketAsyncEventArgs e)
    {
        if (!Thread.CurrentThread.IsThreadPoolThread)
        {
            // The engine's own thread: the send loop continues on a worker (the sender itself is the work item).
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
            return;
        }

        Complete();
    }

    void IThreadPoolWorkItem.Execute() => Complete();

    private void Complete()
    {
        if (SocketError == SocketError.Success)
        {
            source.SetResult(BytesTransferred);
        }
        else
        {
            source.SetException(new SocketException((int)SocketError));
        }
    }

    private static ArraySegment<byte> AsSegment(ReadOnlyMemory<byte> memory)
    {
        if (!MemoryMarshal.TryGetArray(memory, out var segment))
        {
            throw new InvalidOperationException("Socket sends need array-backed pipe memory.");
        }

        return segment;
    }
}
