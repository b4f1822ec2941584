using System.Net.WebSockets;
using System.Text;
using Broker.TestKit;

namespace Broker.WebSocket.Tests;

/// <summary>
/// A NATS connection over <see cref="ClientWebSocket"/>: text protocol in binary messages, lines read across
/// message boundaries. Every wait has a deadline.
/// </summary>
public sealed class WsNatsClient : IAsyncDisposable
{
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(5);

    private readonly ClientWebSocket socket;
    private readonly byte[] buffer = new byte[64 * 1024];
    private readonly ReceivedBytes pending = new();

    private WsNatsClient(ClientWebSocket socket)
    {
        this.socket = socket;
    }

    public string Info { get; private set; } = "";

    public ClientWebSocket Socket => socket;

    public static async Task<WsNatsClient> ConnectAsync(Uri uri, Action<ClientWebSocketOptions>? configure = null)
    {
        var socket = new ClientWebSocket();
        socket.Options.CollectHttpResponseDetails = true;
        socket.Options.RemoteCertificateValidationCallback = (_, cert, _, _) =>
            Broker.TestKit.TestCertificates.Shared.ValidateServer(cert as System.Security.Cryptography.X509Certificates.X509Certificate2);
        configure?.Invoke(socket.Options);
        using (var cts = new CancellationTokenSource(DefaultTimeout))
        {
            await socket.ConnectAsync(uri, cts.Token);
        }

        var client = new WsNatsClient(socket);
        client.Info = await client.ReadLineAsync();
        Assert.StartsWith("INFO ", client.Info, StringComparison.Ordinal);
        return client;
    }

    public async Task SendAsync(string text)
    {
        using var cts = new CancellationTokenSource(DefaultTimeout);
        await socket.SendAsync(Encoding.UTF8.GetBytes(text), WebSocketMessageType.Binary, endOfMessage: true, cts.Token);
    }

    public async Task<string> ReadLineAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        while (true)
        {
            var line = pending.TakeLine(Encoding.UTF8);
            if (line is not null)
            {
                return line;
            }

            var result = await socket.ReceiveAsync(buffer, cts.Token);
            if (result.MessageType == WebSocketMessageType.Close)
            {
                throw new IOException($"closed: {result.CloseStatus} {result.CloseStatusDescription}");
            }

            pending.Append(buffer.AsSpan(0, result.Count));
        }
    }

    public async Task<List<string>> ReadUntilAsync(string terminator, TimeSpan? timeout = null)
    {
        var lines = new List<string>();
        while (true)
        {
            var line = await ReadLineAsync(timeout);
            lines.Add(line);
            if (line == terminator)
            {
                return lines;
            }
        }
    }

    /// <summary>Reads until the server's close frame; returns the lines before it and the close status.</summary>
    public async Task<(List<string> Lines, WebSocketCloseStatus? Status)> ExpectClosedAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        while (true)
        {
            var result = await socket.ReceiveAsync(buffer, cts.Token);
            if (result.MessageType == WebSocketMessageType.Close)
            {
                var lines = new List<string>();
                while (pending.TakeLine(Encoding.UTF8) is { } line)
                {
                    lines.Add(line);
                }

                return (lines, result.CloseStatus);
            }

            pending.Append(buffer.AsSpan(0, result.Count));
        }
    }

    public ValueTask DisposeAsync()
    {
        socket.Abort();
        socket.Dispose();
        return ValueTask.CompletedTask;
    }
}
