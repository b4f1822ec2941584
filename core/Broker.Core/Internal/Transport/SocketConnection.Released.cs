using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// The accepted socket let go (issue 25). Once both on-demand sides read and write through the epoll socket, which
/// keeps the descriptor's handle, nothing frequent needs the runtime's <see cref="Socket"/>: it and its remote end
/// point (an <see cref="IPEndPoint"/> and its <see cref="IPAddress"/>) were about 180 B per idle connection. An IPv4
/// peer is kept as a number in the epoll socket and made into an end point when asked (/connz, logs). What is rare
/// (the local end point, the abort's linger option, shutdown, the close) goes through a <see cref="Socket"/> made over
/// the same handle for that call (<see cref="RuntimeSocket"/>): it shares the handle's state (a shutdown it made is
/// seen by a later close), and its dispose closes the descriptor as the accepted socket's would (not the handle's own
/// dispose, which resets the connection).
/// </summary>
internal sealed partial class SocketConnection
{
    /// <summary>Whether the connection still holds the accepted socket (tests read it).</summary>
    internal bool HoldsRuntimeSocket => Volatile.Read(ref socket) is not null;

    // After a side was taken: lets the accepted socket go once both sides are the epoll socket's. The accepted socket's
    // finalizer is suppressed: it would close the descriptor the handle still serves.
    private void ReleaseSocket()
    {
        if (Volatile.Read(ref socket) is null
            || Volatile.Read(ref inputSide) is not SocketInputReader { Epoll: { } epoll }
            || Volatile.Read(ref outputSide) is not SocketOutputWriter { Epoll: { } writes } || !ReferenceEquals(epoll, writes))
        {
            return;
        }

        if (Volatile.Read(ref remoteEndPoint) is IPEndPoint { AddressFamily: AddressFamily.InterNetwork } v4)
        {
            // The number first, then the field cleared: a reader that finds the field empty finds the number.
            Span<byte> address = stackalloc byte[4];
            v4.Address.TryWriteBytes(address, out _);
            Volatile.Write(ref epoll.Peer, MemoryMarshal.Read<uint>(address) | ((long)v4.Port << 32) | (1L << 48));
            Volatile.Write(ref remoteEndPoint, null);
        }

        if (Interlocked.Exchange(ref socket, null) is { } released)
        {
#pragma warning disable CA1816 // The socket's finalizer would close a descriptor it no longer owns alone.
            GC.SuppressFinalize(released);
#pragma warning restore CA1816
        }
    }

    private IPEndPoint? PeerEndPoint()
    {
        var peer = EpollSide is { } epoll ? Volatile.Read(ref epoll.Peer) : 0;
        if (peer == 0)
        {
            return null;
        }

        Span<byte> address = stackalloc byte[4];
        MemoryMarshal.Write(address, (uint)peer);
        return new IPEndPoint(new IPAddress(address), (int)(peer >> 32) & 0xFFFF);
    }

    // The accepted socket, or once it was let go a socket made over the same handle for this call (its finalizer
    // suppressed: only an explicit dispose may close the descriptor); null once the descriptor is closed.
    private Socket? RuntimeSocket()
    {
        if (Volatile.Read(ref socket) is { } accepted)
        {
            return accepted;
        }

        if (EpollSide is not { } epoll || epoll.Handle.IsClosed)
        {
            // Closed already (a dispose after the abort): no view, and no exception for it.
            return null;
        }

        try
        {
            var view = new Socket(epoll.Handle);
#pragma warning disable CA1816 // A view not disposed must not close the descriptor from the finalizer.
            GC.SuppressFinalize(view);
#pragma warning restore CA1816
            return view;
        }
        catch (Exception ex) when (ex is ArgumentException or ObjectDisposedException or SocketException)
        {
            // Closed meanwhile.
            return null;
        }
    }
}
