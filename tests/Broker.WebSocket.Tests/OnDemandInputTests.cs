using System.IO.Pipelines;
using System.Net;
using System.Text;
using Broker.Abstractions;
using Broker.Adapters.WebSocket;
using Broker.Adapters.WebSocket.Internal;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.WebSocket.Tests;

/// <summary>
/// A plain TCP connection is read on demand from the upgrade request on: the WebSocket receive loop makes the socket's
/// reads itself (no socket receive loop handing reads to workers; docs/benchmarks.md "ws2").
/// </summary>
public sealed class OnDemandInputTests
{
    [Fact(Timeout = 30_000)]
    public async Task The_handler_asks_for_on_demand_input_before_it_reads_the_upgrade_request()
    {
        await using var connection = new RecordingConnection();
        var request = RawWebSocket.Request();
        await connection.PeerInput.WriteAsync(Encoding.ASCII.GetBytes(request));
        await connection.PeerInput.CompleteAsync();
        var handler = new WebSocketProtocolHandler(new WebSocketOptions(), new NoServices(), NullLogger.Instance);

        // No "nats" handler here: the upgrade is refused (404) after the request was read, which is all this needs.
        await handler.OnConnectionAsync(connection, CancellationToken.None);

        Assert.True(connection.AskedOnDemand, "UseOnDemandInput was not called");
        Assert.False(connection.InputTakenFirst, "the input was read before on-demand input was asked for");
    }

    private sealed class NoServices : IServiceProvider
    {
        public object? GetService(Type serviceType)
            => serviceType == typeof(IEnumerable<IProtocolHandler>) ? Array.Empty<IProtocolHandler>() : null;
    }

    /// <summary>A connection that is its own transport, as the TCP transport's, and records the order of use.</summary>
    private sealed class RecordingConnection : TransportConnection, IDuplexPipe, IOnDemandTransport
    {
        private readonly Pipe input = new();
        private readonly Pipe output = new();

        public RecordingConnection() => Transport = this;

        public bool AskedOnDemand { get; private set; }

        public bool InputTakenFirst { get; private set; }

        public PipeWriter PeerInput => input.Writer;

        public override string ConnectionId => "recording";

        public override IDuplexPipe Transport { get; set; }

        public override EndPoint? LocalEndPoint => null;

        public override EndPoint? RemoteEndPoint => null;

        public override TransportSettings Settings { get; } = new();

        public override CancellationToken ConnectionClosed => CancellationToken.None;

        PipeReader IDuplexPipe.Input
        {
            get
            {
                InputTakenFirst |= !AskedOnDemand;
                return input.Reader;
            }
        }

        PipeWriter IDuplexPipe.Output => output.Writer;

        public bool UseOnDemandInput()
        {
            AskedOnDemand = true;
            return !InputTakenFirst;
        }

        public bool UseOnDemandOutput() => false;

        public override void Abort(string reason)
        {
        }

        public override ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }
}
