using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.Abstractions;
using Broker.Core;
using Microsoft.Extensions.DependencyInjection;

namespace Broker.Monitoring.Tests;

/// <summary>
/// The minimal HTTP/1.1 server under the endpoints, over raw sockets: methods, keep-alive, pipelining, limits, and
/// garbage that must get a 400 without harming the listener.
/// </summary>
public sealed class HttpServerTests
{
    [Fact(Timeout = 30_000)]
    public async Task Keep_alive_serves_two_requests_on_one_socket()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        using var socket = await ConnectAsync(broker);
        await SendAsync(socket, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        var first = await ReadResponseAsync(socket);
        Assert.Equal(200, first.Status);
        Assert.Equal("{\"status\":\"ok\"}", first.Body);
        Assert.False(first.Headers.ContainsKey("connection"));

        await SendAsync(socket, "GET /varz HTTP/1.1\r\nHost: x\r\n\r\n");
        var second = await ReadResponseAsync(socket);
        Assert.Equal(200, second.Status);
        Assert.Contains("\"server_id\"", second.Body, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task Pipelined_requests_are_answered_in_order()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        using var socket = await ConnectAsync(broker);
        await SendAsync(socket, "GET /healthz HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\nGET /accountz HTTP/1.1\r\nConnection: close\r\n\r\n");
        Assert.Equal(200, (await ReadResponseAsync(socket)).Status);
        Assert.Equal(404, (await ReadResponseAsync(socket)).Status);
        var last = await ReadResponseAsync(socket);
        Assert.Equal(200, last.Status);
        Assert.Equal("close", last.Headers["connection"]);
        Assert.True(await IsClosedAsync(socket));
    }

    [Fact(Timeout = 30_000)]
    public async Task Head_answers_headers_with_the_length_but_no_body()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        using var socket = await ConnectAsync(broker);
        await SendAsync(socket, "HEAD /healthz HTTP/1.1\r\n\r\n");
        var head = await ReadResponseAsync(socket, expectBody: false);
        Assert.Equal(200, head.Status);
        Assert.Equal("15", head.Headers["content-length"]);

        // Nothing but the next answer follows: the body really was left out.
        await SendAsync(socket, "GET /healthz HTTP/1.1\r\n\r\n");
        Assert.Equal("{\"status\":\"ok\"}", (await ReadResponseAsync(socket)).Body);
    }

    [Fact(Timeout = 30_000)]
    public async Task Unknown_paths_get_gos_404()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        foreach (var path in new[] { "/nope", "/varz/", "/varzz", "/gatewayz" })
        {
            var (status, body, response) = await broker.GetAsync(path);
            Assert.Equal(HttpStatusCode.NotFound, status);
            Assert.Equal("404 page not found\n", body);
            response.Dispose();
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task Other_methods_get_405_with_allow()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        using var socket = await ConnectAsync(broker);
        await SendAsync(socket, "POST /varz HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
        var response = await ReadResponseAsync(socket);
        Assert.Equal(405, response.Status);
        Assert.Equal("GET, HEAD", response.Headers["allow"]);

        // Without a body the connection stays usable.
        await SendAsync(socket, "GET /healthz HTTP/1.1\r\n\r\n");
        Assert.Equal(200, (await ReadResponseAsync(socket)).Status);

        // With a body it is answered, then closed (the body is never read as a request).
        await SendAsync(socket, "PUT /varz HTTP/1.1\r\nContent-Length: 5\r\n\r\nGET /");
        Assert.Equal(405, (await ReadResponseAsync(socket)).Status);
        Assert.True(await IsClosedAsync(socket));
    }

    [Theory(Timeout = 30_000)]
    [InlineData("garbage\r\n\r\n", 400)]
    [InlineData("GET\r\n\r\n", 400)]
    [InlineData("GET /varz\r\n\r\n", 400)]
    [InlineData("GET varz HTTP/1.1\r\n\r\n", 400)]
    [InlineData("GET /varz HTTP/1.1 extra\r\n\r\n", 400)]
    [InlineData("GET /varz HTTP/9.9\r\n\r\n", 505)]
    [InlineData("GET /varz HTTP/1.1\r\nBad Header: x\r\n\r\n", 400)]
    [InlineData("GET /varz HTTP/1.1\r\n folded: x\r\n\r\n", 400)]
    [InlineData("GET /varz HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400)]
    [InlineData("GET /varz HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400)]
    [InlineData("GET /v%zzarz HTTP/1.1\r\n\r\n", 400)]
    [InlineData("G\u0001T /varz HTTP/1.1\r\n\r\n", 400)]
    [InlineData("\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003\r\n\r\n", 400)]
    public async Task Garbage_gets_an_error_and_the_listener_keeps_serving(string request, int expected)
    {
        await using var broker = await MonitoredBroker.StartAsync();
        using (var socket = await ConnectAsync(broker))
        {
            await socket.SendAsync(Encoding.Latin1.GetBytes(request));
            var response = await ReadResponseAsync(socket);
            Assert.Equal(expected, response.Status);
            Assert.Equal("close", response.Headers["connection"]);
            Assert.True(await IsClosedAsync(socket));
        }

        Assert.Equal(broker.Server.ServerId, (await broker.GetJsonAsync("/varz")).GetProperty("server_id").GetString());
    }

    [Fact(Timeout = 30_000)]
    public async Task A_malformed_query_escape_gets_400()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        using var socket = await ConnectAsync(broker);
        await SendAsync(socket, "GET /connz?auth=1&limit=%zz HTTP/1.1\r\n\r\n");
        var response = await ReadResponseAsync(socket);
        Assert.Equal(400, response.Status);
        Assert.Equal("invalid query string: malformed % escape", response.Body);

        // An application-level 400 keeps the connection.
        await SendAsync(socket, "GET /connz?limit=%31 HTTP/1.1\r\n\r\n");
        Assert.Contains("\"limit\": 1,", (await ReadResponseAsync(socket)).Body, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task Random_bytes_never_crash_the_listener()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        var random = new Random(1234);
        for (var i = 0; i < 20; i++)
        {
            using var socket = await ConnectAsync(broker);
            var bytes = new byte[random.Next(1, 3000)];
            random.NextBytes(bytes);
            await socket.SendAsync(bytes);
            await socket.SendAsync("\r\n\r\n"u8.ToArray());
            socket.Shutdown(SocketShutdown.Send);
            await DrainAsync(socket);
        }

        Assert.Equal(200, (int)(await broker.GetAsync("/healthz")).Status);
    }

    [Fact(Timeout = 30_000)]
    public async Task An_oversized_head_gets_431_and_is_closed()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        using var socket = await ConnectAsync(broker);
        await SendAsync(socket, "GET /varz HTTP/1.1\r\nX-Big: " + new string('a', 20_000) + "\r\n\r\n");
        var response = await ReadResponseAsync(socket);
        Assert.Equal(431, response.Status);
        Assert.True(await IsClosedAsync(socket));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_request_head_that_never_completes_is_cut_off()
    {
        await using var broker = await MonitoredBroker.StartAsync(options => options.Monitoring.RequestHeadersTimeout = TimeSpan.FromMilliseconds(300));
        using var socket = await ConnectAsync(broker);
        await SendAsync(socket, "GET /varz HTTP/1.1\r\nHost: x\r\n");
        var response = await ReadResponseAsync(socket);
        Assert.Equal(408, response.Status);
        Assert.True(await IsClosedAsync(socket));
    }

    [Fact(Timeout = 30_000)]
    public async Task An_idle_kept_alive_connection_is_closed_without_an_answer()
    {
        await using var broker = await MonitoredBroker.StartAsync(options => options.Monitoring.KeepAliveTimeout = TimeSpan.FromMilliseconds(300));
        using var socket = await ConnectAsync(broker);
        await SendAsync(socket, "GET /healthz HTTP/1.1\r\n\r\n");
        Assert.Equal(200, (await ReadResponseAsync(socket)).Status);
        Assert.True(await IsClosedAsync(socket));
    }

    [Fact(Timeout = 30_000)]
    public async Task Http_1_0_closes_unless_kept_alive_and_absolute_urls_work()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        using (var socket = await ConnectAsync(broker))
        {
            await SendAsync(socket, "GET /healthz HTTP/1.0\r\n\r\n");
            Assert.Equal(200, (await ReadResponseAsync(socket)).Status);
            Assert.True(await IsClosedAsync(socket));
        }

        using (var socket = await ConnectAsync(broker))
        {
            await SendAsync(socket, "GET http://localhost/h%65althz?x=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
            var kept = await ReadResponseAsync(socket);
            Assert.Equal(200, kept.Status);
            Assert.Equal("keep-alive", kept.Headers["connection"]);
            await SendAsync(socket, "\r\nGET /healthz HTTP/1.1\n\n");
            Assert.Equal(200, (await ReadResponseAsync(socket)).Status);
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task The_monitor_listener_is_a_broker_listener()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        Assert.Equal(broker.MonitorEndPoint, broker.Server.EndPoints[BrokerServer.MonitorListenerName]);
        await using var plain = await Broker.TestKit.TestBroker.StartAsync();
        Assert.False(plain.Server.EndPoints.ContainsKey(BrokerServer.MonitorListenerName));
    }

    [Fact(Timeout = 30_000)]
    public async Task Monitoring_connections_pass_through_the_configured_middleware()
    {
        var middleware = new CountingMiddleware();
        var options = new BrokerOptions { Host = "127.0.0.1", Port = 0 };
        options.Monitoring.Host = "127.0.0.1";
        options.Monitoring.Port = 0;
        options.Monitoring.Middleware.Add(middleware.Name);
        await using var server = new BrokerServer(options)
            .ConfigureServices(services => services.AddSingleton<IConnectionMiddleware>(middleware));
        await server.StartAsync();
        var port = ((IPEndPoint)server.GetEndPoint(BrokerServer.MonitorListenerName)).Port;
        using var http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(10) };
        Assert.Equal("{\"status\":\"ok\"}", await http.GetStringAsync("/healthz"));
        Assert.Equal(1, middleware.Connections);

        // The NATS client port does not get it.
        await using var client = await Broker.TestKit.RawClient.ConnectAsync(server.ClientEndPoint);
        Assert.Equal(1, middleware.Connections);
    }

    internal static async Task<Socket> ConnectAsync(MonitoredBroker broker)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(5));
        await socket.ConnectAsync(broker.MonitorEndPoint, cts.Token);
        return socket;
    }

    private static async Task SendAsync(Socket socket, string text) => await socket.SendAsync(Encoding.ASCII.GetBytes(text), SocketFlags.None);

    /// <summary>Reads one response: status line, header fields (names lower-cased) and a Content-Length body.</summary>
    internal static async Task<RawResponse> ReadResponseAsync(Socket socket, bool expectBody = true)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var head = new List<byte>();
        var one = new byte[1];
        while (head.Count < 4 || !(head[^4] == '\r' && head[^3] == '\n' && head[^2] == '\r' && head[^1] == '\n'))
        {
            if (await socket.ReceiveAsync(one, SocketFlags.None, cts.Token) == 0)
            {
                throw new IOException("Closed before a full response head; got: " + Encoding.ASCII.GetString([.. head]));
            }

            head.Add(one[0]);
        }

        var lines = Encoding.ASCII.GetString([.. head]).Split("\r\n", StringSplitOptions.RemoveEmptyEntries);
        var status = int.Parse(lines[0].Split(' ')[1], System.Globalization.CultureInfo.InvariantCulture);
        var headers = lines.Skip(1).Select(l => l.Split(':', 2)).ToDictionary(p => p[0].ToLowerInvariant(), p => p[1].Trim());
        var body = string.Empty;
        if (expectBody && headers.TryGetValue("content-length", out var lengthText))
        {
            var bytes = new byte[int.Parse(lengthText, System.Globalization.CultureInfo.InvariantCulture)];
            var read = 0;
            while (read < bytes.Length)
            {
                var n = await socket.ReceiveAsync(bytes.AsMemory(read), SocketFlags.None, cts.Token);
                if (n == 0)
                {
                    throw new IOException("Closed inside the body.");
                }

                read += n;
            }

            body = Encoding.UTF8.GetString(bytes);
        }

        return new RawResponse(status, headers, body);
    }

    /// <summary>Whether the server closes the socket (within 5 seconds) without sending anything more.</summary>
    internal static async Task<bool> IsClosedAsync(Socket socket)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(5));
        try
        {
            return await socket.ReceiveAsync(new byte[1], SocketFlags.None, cts.Token) == 0;
        }
        catch (SocketException)
        {
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    private static async Task DrainAsync(Socket socket)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var buffer = new byte[4096];
        try
        {
            while (await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token) > 0)
            {
            }
        }
        catch (SocketException)
        {
        }
    }

    internal sealed record RawResponse(int Status, Dictionary<string, string> Headers, string Body);

    private sealed class CountingMiddleware : IConnectionMiddleware
    {
        private int connections;

        public string Name => "counting";

        public int Connections => Volatile.Read(ref connections);

        public ValueTask<TransportConnection?> OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref connections);
            return ValueTask.FromResult<TransportConnection?>(connection);
        }
    }
}
