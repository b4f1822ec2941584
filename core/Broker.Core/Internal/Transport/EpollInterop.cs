using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// libc's epoll and socket calls for <see cref="EpollEngine"/> and <see cref="EpollSocket"/> (Linux only). Receives and
/// sends pass <c>MSG_DONTWAIT</c> rather than making the descriptor non-blocking: setting <see cref="Socket.Blocking"/>
/// would make the runtime's <c>SocketAsyncContext</c> (its <c>SafeSocketHandle.IsNonBlocking</c> setter does), which is
/// what this transport exists to avoid, and the runtime's own view of the socket (blocking, for its synchronous
/// <c>Shutdown</c> and close) stays true.
/// </summary>
internal static unsafe partial class EpollInterop
{
    public const int EpollIn = 0x001;
    public const int EpollOut = 0x004;
    public const int EpollErr = 0x008;
    public const int EpollHup = 0x010;
    public const int EpollOneShot = 1 << 30;

    public const int CtlAdd = 1;
    public const int CtlDel = 2;
    public const int CtlMod = 3;

    public const int EpollCloexec = 0x80000;

    public const int MsgPeek = 0x2;
    public const int MsgDontWait = 0x40;
    public const int MsgNoSignal = 0x4000;

    public const int EIntr = 4;
    public const int EBadF = 9;
    public const int EAgain = 11;
    public const int EPipe = 32;
    public const int EConnReset = 104;

    /// <summary>
    /// The size of <c>struct epoll_event</c>: packed to 12 bytes on x86-64 (a 32-bit mask, then the 64-bit data at
    /// offset 4), naturally aligned to 16 elsewhere (data at offset 8).
    /// </summary>
    public static readonly int EventSize = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 12 : 16;

    public static readonly int DataOffset = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 4 : 8;

    [LibraryImport("libc", EntryPoint = "epoll_create1", SetLastError = true)]
    public static partial int EpollCreate1(int flags);

    [LibraryImport("libc", EntryPoint = "epoll_ctl", SetLastError = true)]
    public static partial int EpollCtl(int epfd, int op, int fd, byte* @event);

    [LibraryImport("libc", EntryPoint = "epoll_wait", SetLastError = true)]
    public static partial int EpollWait(int epfd, byte* events, int maxEvents, int timeout);

    [LibraryImport("libc", EntryPoint = "recv", SetLastError = true)]
    private static partial nint Recv(int fd, byte* buffer, nuint length, int flags);

    [LibraryImport("libc", EntryPoint = "send", SetLastError = true)]
    private static partial nint Send(int fd, byte* buffer, nuint length, int flags);

    /// <summary>
    /// An <c>epoll_ctl</c> with one event mask and its data; 0 or the errno. Holds a reference on the socket's handle
    /// meanwhile (as the receive and send here do): a close waits, so the descriptor is not reused under it.
    /// </summary>
    public static int Control(SafeSocketHandle handle, int epfd, int op, int fd, int events, ulong data)
    {
        var added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            var buffer = stackalloc byte[16];
            *(uint*)buffer = (uint)events;
            *(ulong*)(buffer + DataOffset) = data;
            return EpollCtl(epfd, op, fd, buffer) == 0 ? 0 : Marshal.GetLastPInvokeError();
        }
        catch (ObjectDisposedException)
        {
            return EBadF;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    /// <summary>A non-blocking <c>recv</c> (with <paramref name="flags"/> more); the count, or -1 and the errno.</summary>
    public static int Receive(SafeSocketHandle handle, int fd, Span<byte> into, int flags, out int errno)
    {
        var added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            fixed (byte* bytes = into)
            {
                var received = Recv(fd, bytes, (nuint)into.Length, MsgDontWait | flags);
                errno = received < 0 ? Marshal.GetLastPInvokeError() : 0;
                return (int)received;
            }
        }
        catch (ObjectDisposedException)
        {
            errno = EBadF;
            return -1;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    /// <summary>A non-blocking <c>send</c> without SIGPIPE; the count, or -1 and the errno.</summary>
    public static int Send(SafeSocketHandle handle, int fd, ReadOnlySpan<byte> bytes, out int errno)
    {
        var added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            fixed (byte* start = bytes)
            {
                var sent = Send(fd, start, (nuint)bytes.Length, MsgDontWait | MsgNoSignal);
                errno = sent < 0 ? Marshal.GetLastPInvokeError() : 0;
                return (int)sent;
            }
        }
        catch (ObjectDisposedException)
        {
            errno = EBadF;
            return -1;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    /// <summary>The exception a failed receive or send completes with (made only on a failure).</summary>
    public static SocketException ToException(int errno) => new((int)(errno switch
    {
        EConnReset => SocketError.ConnectionReset,
        EPipe => SocketError.Shutdown,
        EBadF => SocketError.OperationAborted,
        _ => SocketError.SocketError,
    }));
}
