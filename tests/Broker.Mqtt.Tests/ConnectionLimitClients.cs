using System.Collections.Concurrent;
using System.Net.WebSockets;
using System.Text;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;

namespace Broker.Mqtt.Tests;

/// <summary>
/// One connection attempt of <see cref="ConnectionLimitTests"/>, of any protocol: admitted (kept open in
/// <see cref="Keep"/> until the test lets it go) or refused, with what the protocol said about the refusal.
/// </summary>
internal sealed record Attempt(string Kind, bool Admitted, string Answer, IAsyncDisposable? Keep);

/// <summary>Real clients of every protocol the broker serves, each telling whether <c>max_connections</c> admitted it.</summary>
internal static class ConnectionLimitClients
{
    public const string NatsRefusal = "-ERR 'maximum connections exceeded'";

    private static readonly TimeSpan Timeout = MqttBroker.Timeout;

    /// <summary>A NATS client over TCP: CONNECT and PING, admitted when PONG comes back.</summary>
    public static async Task<Attempt> NatsAsync(TestBroker broker)
    {
        var client = await RawClient.ConnectAsync(broker.EndPoint, readInfo: false);
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
        var transcript = await client.PingAndCollectAsync(Timeout);
        var answer = string.Join(" | ", transcript.Lines.Where(l => !l.StartsWith("INFO ", StringComparison.Ordinal)));
        if (transcript.Closed)
        {
            await client.DisposeAsync();
            return new Attempt("nats", false, answer, null);
        }

        return new Attempt("nats", true, answer, client);
    }

    /// <summary>A NATS client over the WebSocket listener: INFO, then CONNECT and PING; admitted when PONG comes back.</summary>
    public static async Task<Attempt> NatsOverWebSocketAsync(Uri uri)
    {
        var socket = new ClientWebSocket();
        using var cts = new CancellationTokenSource(Timeout);
        await socket.ConnectAsync(uri, cts.Token);
        var text = new StringBuilder();
        var buffer = new byte[4096];
        var sent = false;
        try
        {
            while (!text.ToString().Contains("PONG", StringComparison.Ordinal) && !text.ToString().Contains("-ERR", StringComparison.Ordinal))
            {
                if (!sent && text.ToString().Contains("\r\n", StringComparison.Ordinal))
                {
                    // INFO is in: answer it. A refused client may find the socket closing under this send.
                    sent = true;
                    await socket.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n"u8.ToArray(), WebSocketMessageType.Binary, true, cts.Token);
                }

                var result = await socket.ReceiveAsync(buffer, cts.Token);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    break;
                }

                text.Append(Encoding.ASCII.GetString(buffer, 0, result.Count));
            }
        }
        catch (WebSocketException)
        {
            // Closed by the broker; what it said before is in the text.
        }

        var answer = string.Join(" | ", text.ToString().Split("\r\n", StringSplitOptions.RemoveEmptyEntries).Where(l => !l.StartsWith("INFO ", StringComparison.Ordinal)));
        if (answer.Contains("PONG", StringComparison.Ordinal))
        {
            return new Attempt("websocket", true, answer, new Disposer(() => { socket.Abort(); socket.Dispose(); }));
        }

        socket.Dispose();
        return new Attempt("websocket", false, answer, null);
    }

    /// <summary>An MQTTnet client: admitted on CONNACK success; the result code otherwise, however MQTTnet reports it.</summary>
    public static async Task<Attempt> MqttAsync(TestBroker broker, MqttProtocolVersion version)
    {
        var kind = version == MqttProtocolVersion.V500 ? "mqtt5" : "mqtt3";
        var client = new MqttClientFactory().CreateMqttClient();
        using var cts = new CancellationTokenSource(Timeout);
        try
        {
            var options = new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", broker.MqttPort()).WithProtocolVersion(version)
                .WithClientId(kind + Guid.NewGuid().ToString("N")).WithCleanSession().WithTimeout(Timeout).Build();
            var result = await client.ConnectAsync(options, cts.Token);
            if (result.ResultCode == MqttClientConnectResultCode.Success && client.IsConnected)
            {
                return new Attempt(kind, true, result.ResultCode.ToString(), new Disposer(client.Dispose));
            }

            client.Dispose();
            return new Attempt(kind, false, result.ResultCode.ToString(), null);
        }
        catch (MQTTnet.Adapter.MqttConnectingFailedException ex)
        {
            client.Dispose();
            // MQTTnet gives the CONNACK's code only in the message.
            var code = Enum.GetNames<MqttClientConnectResultCode>().FirstOrDefault(name => name != nameof(MqttClientConnectResultCode.Success) && ex.Message.Contains(name, StringComparison.Ordinal));
            return new Attempt(kind, false, code ?? ex.Message, null);
        }
    }

    /// <summary>
    /// MQTT by hand, to see the refusal's bytes: the CONNACK's return code (3.1.1) or reason code (5), as two hex digits.
    /// </summary>
    public static async Task<Attempt> RawMqttAsync(TestBroker broker, byte level)
    {
        var kind = level == 5 ? "raw-mqtt5" : "raw-mqtt3";
        var raw = await RawMqtt.ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(RawMqtt.Connect(kind + Guid.NewGuid().ToString("N"), level));
        var (header, body) = await raw.ReadPacketAsync(Timeout);
        Assert.Equal(0x20, header);
        var code = body[1].ToString("X2", System.Globalization.CultureInfo.InvariantCulture);
        if (body[1] == 0)
        {
            return new Attempt(kind, true, code, raw);
        }

        await raw.DisposeAsync();
        return new Attempt(kind, false, code, null);
    }

    /// <summary>
    /// Runs every attempt at once: each on a thread of its own, all released by one barrier (the thread pool would
    /// start them a few at a time), and waits for all of them.
    /// </summary>
    public static async Task<List<Attempt>> AllAtOnceAsync(IReadOnlyList<Func<Task<Attempt>>> attempts)
    {
        var results = new ConcurrentBag<Attempt>();
        var failures = new ConcurrentBag<Exception>();
        using var barrier = new Barrier(attempts.Count);
        var threads = attempts.Select(attempt => new Thread(() =>
        {
            barrier.SignalAndWait();
            try
            {
                results.Add(attempt().GetAwaiter().GetResult());
            }
            catch (Exception ex)
            {
                failures.Add(ex);
            }
        })).ToList();
        threads.ForEach(t => t.Start());
        await Task.Run(() => threads.ForEach(t => t.Join()));
        if (!failures.IsEmpty)
        {
            await LetGoAsync(results);
            throw new AggregateException(failures);
        }

        return [.. results];
    }

    public static async Task LetGoAsync(IEnumerable<Attempt> attempts)
    {
        foreach (var attempt in attempts)
        {
            if (attempt.Keep is { } keep)
            {
                await keep.DisposeAsync();
            }
        }
    }

    private sealed class Disposer(Action dispose) : IAsyncDisposable
    {
        public ValueTask DisposeAsync()
        {
            dispose();
            return ValueTask.CompletedTask;
        }
    }
}
