using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using Broker.Abstractions;
using Broker.Core;
using Microsoft.Extensions.DependencyInjection;

namespace Broker.Bus.Tests;

/// <summary>
/// A protocol plugin whose listener hands every accepted connection to the test, which then plays the adapter: it
/// calls <see cref="IMessageBus.ConnectAsync"/> with the real <see cref="TransportConnection"/> (a socket, its
/// output buffer and pending-bytes feature), while a socket on the other side plays the adapter's client.
/// </summary>
internal sealed class AdapterHarness : IBrokerPlugin, IProtocolHandler
{
    public const string ProtocolName = "probe";

    private readonly Channel<AdapterPeer> accepted = Channel.CreateUnbounded<AdapterPeer>();

    public string Protocol => ProtocolName;

    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        services.AddSingleton(new ListenerDefinition { Name = ProtocolName, EndPoint = new IPEndPoint(IPAddress.Loopback, 0), Protocol = ProtocolName });
        services.AddSingleton<IProtocolHandler>(this);
    }

    public async Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
    {
        var peer = new AdapterPeer(connection);
        await accepted.Writer.WriteAsync(peer, cancellationToken);
        try
        {
            // The test owns the connection until it releases it or the peer goes away.
            await peer.Released.WaitAsync(cancellationToken);
        }
        catch (OperationCanceledException)
        {
        }
    }

    /// <summary>Opens a socket to the probe listener and returns it with the broker's side of the connection.</summary>
    public async Task<AdapterPeer> ConnectAsync(TestBroker broker)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await socket.ConnectAsync(broker.Server.GetEndPoint(ProtocolName), timeout.Token);
        var peer = await accepted.Reader.ReadAsync(timeout.Token);
        peer.Socket = socket;
        return peer;
    }

    /// <summary>Starts a broker with the harness (and monitoring on a free port).</summary>
    public static async Task<(TestBroker Broker, AdapterHarness Harness)> StartAsync(Action<BrokerOptions>? configure = null)
    {
        var harness = new AdapterHarness();
        var broker = await TestBroker.StartAsync(options => Configure(options, configure), [harness]);
        return (broker, harness);
    }

    /// <summary>Options as <see cref="StartAsync"/> starts the broker with, for a reload that changes only what <paramref name="configure"/> sets.</summary>
    public static BrokerOptions Options(Action<BrokerOptions>? configure = null)
    {
        var options = new BrokerOptions { Host = "127.0.0.1", Port = 0 };
        Configure(options, configure);
        return options;
    }

    private static void Configure(BrokerOptions options, Action<BrokerOptions>? configure)
    {
        options.Monitoring.Host = "127.0.0.1";
        options.Monitoring.Port = 0;
        configure?.Invoke(options);
    }
}

/// <summary>One accepted probe connection: the broker's side, and the test's socket on the other side.</summary>
internal sealed class AdapterPeer : IAsyncDisposable
{
    private readonly TaskCompletionSource released = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public AdapterPeer(TransportConnection connection)
    {
        Connection = connection;
    }

    public TransportConnection Connection { get; }

    public Socket Socket { get; set; } = null!;

    public Task Released => released.Task;

    /// <summary>Opens a bus connection for it as an adapter would, with <paramref name="options"/> (protocol preset).</summary>
    public Task<BusConnectResult> ConnectAsync(IMessageBus bus, Func<BusConnectOptions, BusConnectOptions>? configure = null)
    {
        var options = new BusConnectOptions { Protocol = AdapterHarness.ProtocolName };
        return bus.ConnectAsync(Connection, configure?.Invoke(options) ?? options).AsTask();
    }

    /// <summary>Reads what the broker wrote to the connection until <paramref name="count"/> bytes arrived.</summary>
    public async Task<byte[]> ReceiveAsync(int count, TimeSpan? timeout = null)
    {
        var received = new byte[count];
        var at = 0;
        using var cancel = new CancellationTokenSource(timeout ?? TimeSpan.FromSeconds(10));
        while (at < count)
        {
            var read = await Socket.ReceiveAsync(received.AsMemory(at), SocketFlags.None, cancel.Token);
            if (read == 0)
            {
                throw new InvalidOperationException($"The connection closed after {at} of {count} bytes.");
            }

            at += read;
        }

        return received;
    }

    public ValueTask DisposeAsync()
    {
        released.TrySetResult();
        Socket?.Dispose();
        return ValueTask.CompletedTask;
    }
}
