using System.Net;
using System.Net.Sockets;
using Broker.Compare.Load;
using Broker.Compare.Mqtt;

namespace Broker.Compare.Storm;

/// <summary>
/// Subscribers that stop reading: a third each NATS, MQTT (QoS 0) and NATS over WebSocket, on the steady traffic's
/// subjects, each with a 4 KiB kernel receive buffer so the server, not the kernel, holds what they do not read.
/// Once subscribed they are never read again until <see cref="Classify"/> drains them to learn which ones the
/// server cut off.
/// </summary>
internal sealed class StalledPeers : IDisposable
{
    /// <summary>The peers' protocols, in the order they are opened round robin.</summary>
    public static readonly string[] Protocols = ["NATS", "MQTT", "WebSocket"];

    private const int ReceiveBuffer = 4 * 1024;

    private readonly (string Protocol, Socket Socket, IDisposable Owner)[] peers;

    private StalledPeers((string, Socket, IDisposable)[] peers) => this.peers = peers;

    public int Count => peers.Length;

    /// <summary>Opens <paramref name="count"/> stalled subscribers at once (on several threads), each subscribed before it returns.</summary>
    public static StalledPeers Open(IPEndPoint nats, IPEndPoint mqtt, IPEndPoint webSocket, int count, CancellationToken cancellationToken)
    {
        var peers = new (string, Socket, IDisposable)[count];
        var next = -1;
        Exception? failure = null;

        // Dedicated threads, not the thread pool: the connects block, and a starved pool would stall the harness's own
        // HTTP calls to the server's monitoring port.
        var threads = Enumerable.Range(0, Math.Min(16, Math.Max(1, count))).Select(_ => new Thread(() =>
        {
            try
            {
                for (var i = Interlocked.Increment(ref next); i < count && Volatile.Read(ref failure) is null; i = Interlocked.Increment(ref next))
                {
                    peers[i] = OpenOne(i, nats, mqtt, webSocket, cancellationToken);
                }
            }
#pragma warning disable CA1031 // The first failure is rethrown on the caller's thread once every opener stopped.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                Interlocked.CompareExchange(ref failure, ex, null);
            }
        }) { IsBackground = true, Name = "storm-stalled-open" }).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        if (failure is not null)
        {
            foreach (var (_, _, owner) in peers)
            {
                owner?.Dispose();
            }

            throw new InvalidOperationException($"opening the stalled subscribers failed: {failure.Message}", failure);
        }

        return new StalledPeers(peers);
    }

    private static (string, Socket, IDisposable) OpenOne(int i, IPEndPoint nats, IPEndPoint mqtt, IPEndPoint webSocket, CancellationToken cancellationToken)
    {
        var protocol = Protocols[i % Protocols.Length];
        if (protocol == "MQTT")
        {
            var wire = MqttWire.ConnectAsync(mqtt, $"stalled-{i}", cancellationToken, receiveBufferSize: ReceiveBuffer).GetAwaiter().GetResult();
            try
            {
                wire.SubscribeAsync("soak/steady/+", 0, cancellationToken).GetAwaiter().GetResult();
                return (protocol, wire.Socket, wire);
            }
            catch
            {
                wire.Dispose();
                throw;
            }
        }

        var endpoint = protocol == "NATS" ? new NatsEndpoint(nats) : new NatsEndpoint(webSocket, NatsTransport.WebSocket);
        var socket = NatsSocket.Open(endpoint, $"stalled-{i}", receiveBufferSize: ReceiveBuffer);

        // Subscribed after the handshake, without waiting for the PONG: messages may come first.
        socket.Send("SUB soak.steady.* 1\r\n"u8);
        return (protocol, socket.Socket, socket);
    }

    /// <summary>
    /// Reads every peer until the server's close (FIN or reset) or until nothing arrived for <paramref name="quiet"/>
    /// (the publisher has stopped, so a peer still open then was not cut off); all peers at once.
    /// </summary>
    public IReadOnlyList<StalledOutcome> Classify(TimeSpan quiet)
        => peers.AsParallel().AsOrdered().WithDegreeOfParallelism(Math.Max(1, Math.Min(peers.Length, 32)))
            .Select(peer => Drain(peer.Protocol, peer.Socket, quiet)).ToList();

    public void Dispose()
    {
        foreach (var (_, _, owner) in peers)
        {
            owner.Dispose();
        }
    }

    private static StalledOutcome Drain(string protocol, Socket socket, TimeSpan quiet)
    {
        var buffer = new byte[64 * 1024];
        long bytes = 0;
        socket.ReceiveTimeout = (int)quiet.TotalMilliseconds;
        try
        {
            while (true)
            {
                var read = socket.Receive(buffer);
                if (read == 0)
                {
                    return new StalledOutcome(protocol, CutOff: true, bytes);
                }

                bytes += read;
            }
        }
        catch (SocketException ex) when (ex.SocketErrorCode is SocketError.TimedOut or SocketError.WouldBlock)
        {
            return new StalledOutcome(protocol, CutOff: false, bytes);
        }
        catch (SocketException)
        {
            // Reset by the server: cut off (what was still queued for it is gone with the reset).
            return new StalledOutcome(protocol, CutOff: true, bytes);
        }
    }
}

/// <summary>One stalled subscriber after the storm: whether the server closed it, and how many bytes it had been sent that it read at the end.</summary>
internal sealed record StalledOutcome(string Protocol, bool CutOff, long BytesDrained);
