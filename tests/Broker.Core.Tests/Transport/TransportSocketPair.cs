using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Broker.Abstractions;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>The transport tests' loopback pair: a started <see cref="SocketConnection"/> and the raw socket at its other end.</summary>
internal static class TransportSocketPair
{
    /// <summary>Accepts one loopback connection and starts it with <paramref name="settings"/> (defaults when null).</summary>
    public static async Task<(SocketConnection Connection, Socket Peer)> ConnectAsync(TransportSettings? settings = null)
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await peer.ConnectAsync(listener.LocalEndPoint!);
        var accepted = await listener.AcceptAsync();
        var connection = new SocketConnection(accepted, settings ?? new TransportSettings(), owner: null, PipeScheduler.ThreadPool);
        connection.Start();
        return (connection, peer);
    }
}
