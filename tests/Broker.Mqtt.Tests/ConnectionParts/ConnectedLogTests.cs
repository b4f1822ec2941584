using System.IO.Pipelines;
using System.Net;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal;
using Broker.Adapters.Mqtt.Internal.Connections;
using Microsoft.Extensions.Logging;

namespace Broker.Mqtt.Tests.ConnectionParts;

/// <summary>
/// The connect's and the close's debug lines name the connection (end point and client id) only for a logger that
/// writes them: a server logging at information level formats nothing per connect or close (issue 25, lazy1).
/// </summary>
public sealed class ConnectedLogTests
{
    [Fact(Timeout = 10_000)]
    public Task A_logger_without_debug_lines_never_has_the_connection_named()
    {
        var connection = new EndPointConnection();
        var status = new ConnectionStatus(connection) { NamedClientId = "c1" };
        var logger = new LevelLogger(LogLevel.Information);

        MqttLog.Connected(logger, status, "3.1.1", 60, true);

        Assert.Equal(0, connection.RemoteEndPointReads);
        Assert.Empty(logger.Lines);
        return Task.CompletedTask;
    }

    [Fact(Timeout = 10_000)]
    public Task A_logger_with_debug_lines_gets_the_line_with_the_name()
    {
        var connection = new EndPointConnection();
        var status = new ConnectionStatus(connection) { NamedClientId = "c1" };
        var logger = new LevelLogger(LogLevel.Debug);

        MqttLog.Connected(logger, status, "3.1.1", 60, true);

        Assert.Equal(1, connection.RemoteEndPointReads);
        Assert.Equal(["127.0.0.1:1883 - \"c1\": client connected (MQTT 3.1.1, keep alive 60s, clean True)"], logger.Lines);
        return Task.CompletedTask;
    }

    [Fact(Timeout = 10_000)]
    public Task A_close_logged_without_debug_lines_never_has_the_connection_named()
    {
        var connection = new EndPointConnection();
        var status = new ConnectionStatus(connection) { NamedClientId = "c1" };
        var logger = new LevelLogger(LogLevel.Information);

        MqttLog.Closed(logger, status);

        Assert.Equal(0, connection.RemoteEndPointReads);
        Assert.Empty(logger.Lines);
        return Task.CompletedTask;
    }

    [Fact(Timeout = 10_000)]
    public Task A_close_logged_with_debug_lines_gets_the_line_with_the_name_and_reason()
    {
        var connection = new EndPointConnection();
        var status = new ConnectionStatus(connection) { NamedClientId = "c1" };
        var logger = new LevelLogger(LogLevel.Debug);

        MqttLog.Closed(logger, status);

        Assert.Equal(1, connection.RemoteEndPointReads);
        Assert.Equal(["127.0.0.1:1883 - \"c1\": client closed: closed"], logger.Lines);
        return Task.CompletedTask;
    }

    private sealed class LevelLogger(LogLevel minimum) : ILogger
    {
        public List<string> Lines { get; } = [];

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= minimum;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (IsEnabled(logLevel))
            {
                Lines.Add(formatter(state, exception));
            }
        }
    }

    private sealed class EndPointConnection : TransportConnection
    {
        private readonly EndPoint remote = new IPEndPoint(IPAddress.Loopback, 1883);
        private int reads;

        public int RemoteEndPointReads => reads;

        public override string ConnectionId => "test";

        // Not read by the log line.
        public override IDuplexPipe Transport { get; set; } = null!;

        public override EndPoint? LocalEndPoint => null;

        public override EndPoint? RemoteEndPoint
        {
            get
            {
                reads++;
                return remote;
            }
        }

        public override TransportSettings Settings { get; } = new();

        public override CancellationToken ConnectionClosed => CancellationToken.None;

        public override void Abort(string reason)
        {
        }

        public override ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }
}
