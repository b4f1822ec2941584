using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Broker.Abstractions;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// A bound TCP listener. It also enforces the write deadline of its connections with one periodic sweep, which is
/// cheaper than a timer per send. The port is bound (and a port 0 picked) at once, but connections are taken (the
/// socket listens) only from the first <see cref="AcceptAsync"/>, when the broker starts accepting: as nats-server
/// listens in its <c>AcceptLoop</c>, a client that connects earlier is refused rather than left waiting unserved.
/// </summary>
internal sealed class SocketListener : IConnectionListener
{
    private readonly Socket listenSocket;
    private readonly TransportSettings settings;
    private readonly PipeScheduler outputReaderScheduler;
    // Shrinks once most connections have gone (a burst of 10,000 left a 290 KB bucket array behind; issue 25).
    private readonly ShrinkingDictionary<SocketConnection, byte> connections = new();
    private readonly Timer? deadlineSweep;
    private int unbound;
    private int listening;

    public SocketListener(EndPoint endPoint, TransportSettings settings, PipeScheduler outputReaderScheduler)
    {
        this.settings = settings;
        this.outputReaderScheduler = outputReaderScheduler;
        listenSocket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        if (endPoint is IPEndPoint { Address: var address } && address.Equals(IPAddress.IPv6Any))
        {
            listenSocket.DualMode = true;
        }

        // No ReuseAddress: on Linux .NET maps it to SO_REUSEPORT as well, which lets a second broker bind the same
        // port and share its connections. .NET already sets SO_REUSEADDR on Unix TCP listeners, so a restarted
        // broker still binds its port while old connections linger in TIME_WAIT.
        listenSocket.Bind(endPoint);
        EndPoint = listenSocket.LocalEndPoint!;

        if (settings.WriteDeadline > TimeSpan.Zero)
        {
            var period = TimeSpan.FromMilliseconds(Math.Clamp(settings.WriteDeadline.TotalMilliseconds / 4, 50, 1000));
            deadlineSweep = new Timer(static state => ((SocketListener)state!).SweepWriteDeadlines(), this, period, period);
        }
    }

    public EndPoint EndPoint { get; }

    // One accept loop calls this per connection: a pooled state machine instead of a new one per accept (issue 24).
    [System.Runtime.CompilerServices.AsyncMethodBuilder(typeof(System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<TransportConnection?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        while (true)
        {
            Socket socket;
            try
            {
                if (Interlocked.Exchange(ref listening, 1) == 0)
                {
                    listenSocket.Listen(512);
                }

                socket = await listenSocket.AcceptAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException or OperationCanceledException)
            {
                if (Volatile.Read(ref unbound) != 0 || cancellationToken.IsCancellationRequested)
                {
                    return null;
                }

                // A connection reset before we accepted it: keep accepting.
                continue;
            }

            socket.NoDelay = true;
            var connection = new SocketConnection(socket, settings, this, outputReaderScheduler);
            connections.Set(connection, 0);
            connection.Start();
            return connection;
        }
    }

    public ValueTask UnbindAsync(CancellationToken cancellationToken = default)
    {
        if (Interlocked.Exchange(ref unbound, 1) == 0)
        {
            listenSocket.Dispose();
        }

        return ValueTask.CompletedTask;
    }

    public async ValueTask DisposeAsync()
    {
        await UnbindAsync().ConfigureAwait(false);
        if (deadlineSweep is not null)
        {
            await deadlineSweep.DisposeAsync().ConfigureAwait(false);
        }
    }

    internal void Remove(SocketConnection connection) => connections.TryRemove(connection, out _);

    private void SweepWriteDeadlines()
    {
        var now = Environment.TickCount64;
        var deadline = (long)settings.WriteDeadline.TotalMilliseconds;
        // The dictionary itself, not its Keys: Keys copies every connection into a new list at each sweep (80 KB a
        // second at 10,000 idle connections, garbage that kept the idle server's first generation filling; issue 25).
        foreach (var (connection, _) in connections.Current)
        {
            connection.CheckWriteDeadline(now, deadline);
        }
    }
}
