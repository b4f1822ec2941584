using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using Broker.Abstractions;
using Broker.Core;
using Microsoft.Extensions.DependencyInjection;

namespace Broker.Bus.Tests;

/// <summary>
/// A handler that reports each connection's end itself (<see cref="IReportingProtocolHandler"/>): the listener serves it
/// through <see cref="IReportingProtocolHandler.Serve"/>, keeps the connection until told, then disposes it (issue 25).
/// </summary>
public sealed class ReportingHandlerTests
{
    [Fact(Timeout = 60_000)]
    public async Task Listener_serves_a_reporting_handler_and_closes_the_connection_when_told()
    {
        var handler = new ReportingHandler();
        await using var broker = await TestBroker.StartAsync(options =>
        {
            options.Host = "127.0.0.1";
            options.Port = 0;
        }, [handler]);

        using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await socket.ConnectAsync(broker.Server.GetEndPoint(ReportingHandler.ProtocolName), timeout.Token);
        var (connection, end) = await handler.Served.Reader.ReadAsync(timeout.Token);

        // Served and not yet ended: the connection stays open.
        var buffer = new byte[1];
        var early = socket.ReceiveAsync(buffer, SocketFlags.None, timeout.Token).AsTask();
        Assert.NotSame(early, await Task.WhenAny(early, Task.Delay(300, timeout.Token)));

        end.Ended(connection, null);
        Assert.Equal(0, await early.WaitAsync(timeout.Token));
    }

    private sealed class ReportingHandler : IBrokerPlugin, IReportingProtocolHandler
    {
        public const string ProtocolName = "reporting";

        public Channel<(TransportConnection Connection, IServedConnectionEnd End)> Served { get; } = Channel.CreateUnbounded<(TransportConnection, IServedConnectionEnd)>();

        public string Protocol => ProtocolName;

        public void ConfigureServices(IServiceCollection services, PluginContext context)
        {
            services.AddSingleton(new ListenerDefinition { Name = ProtocolName, EndPoint = new IPEndPoint(IPAddress.Loopback, 0), Protocol = ProtocolName });
            services.AddSingleton<IProtocolHandler>(this);
        }

        // The listener must not wait on a task for a reporting handler's connections.
        public Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken) => throw new InvalidOperationException("served through OnConnectionAsync");

        public void Serve(TransportConnection connection, IServedConnectionEnd served, CancellationToken cancellationToken) => Served.Writer.TryWrite((connection, served));
    }
}
