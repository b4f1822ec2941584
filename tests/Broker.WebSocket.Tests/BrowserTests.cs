using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.TestKit;

namespace Broker.WebSocket.Tests;

/// <summary>
/// A real browser: headless Chromium loads a page from a tiny HTTP server in the test, the page speaks NATS over the
/// browser's own WebSocket to the broker (permessage-deflate on, as Chromium offers it) and exchanges messages with a
/// TCP NATS client on the .NET side. The outcome comes back twice: posted by the page and in the dumped DOM.
/// </summary>
public sealed class BrowserTests
{
    private static readonly TimeSpan BrowserTimeout = TimeSpan.FromSeconds(60);

    [Fact(Timeout = 120_000)]
    public async Task Chromium_exchanges_messages_with_a_dotnet_client_over_websocket()
    {
        var chromium = FindChromium() ?? throw new InvalidOperationException(
            "Chromium is not installed; the test command (scripts/test.sh) installs it with apt-get (package 'chromium').");
        await using var broker = await WsBroker.StartAsync(null, ("compression", "true"));
        await using var dotnet = await RawClient.ConnectAsync(broker.Port);
        await dotnet.SendAsync("CONNECT {\"verbose\":false}\r\nSUB browser.ready 1\r\n");
        Assert.Equal(["PONG"], (await dotnet.PingAndCollectAsync()).Lines);

        var page = (await File.ReadAllTextAsync(Path.Combine(AppContext.BaseDirectory, "browser", "nats-ws.html")))
            .Replace("__WS_URL__", broker.WebSocketUri().ToString(), StringComparison.Ordinal);
        await using var site = new PageServer(page);

        // The .NET side answers the browser's greeting once it arrives.
        var answer = Task.Run(async () =>
        {
            // The broker's first PING may come first while the browser starts: answer it.
            string line;
            while ((line = await dotnet.ReadLineAsync(BrowserTimeout)) == "PING")
            {
                await dotnet.SendAsync("PONG\r\n");
            }

            Assert.StartsWith("MSG browser.ready 1 ", line, StringComparison.Ordinal);
            var greeting = await dotnet.ReadLineAsync(BrowserTimeout);
            await dotnet.SendAsync("PUB browser.in 17\r\nhello from dotnet\r\n");
            return greeting;
        });

        string dom;
        try
        {
            dom = await RunChromiumAsync(chromium, site.Url);
        }
        catch (TimeoutException ex)
        {
            throw new TimeoutException(ex.Message + " broker: " + string.Join(" | ", broker.Logs.Entries.Select(e => e.Message)), ex);
        }

        var greeting = await answer.WaitAsync(BrowserTimeout);
        var posted = await site.Result.WaitAsync(BrowserTimeout);

        Assert.StartsWith("hello from chromium xxxx", greeting, StringComparison.Ordinal);
        Assert.Equal("received: hello from dotnet", posted);
        Assert.Contains("<div id=\"result\">received: hello from dotnet</div>", dom, StringComparison.Ordinal);
        Assert.Contains(broker.Logs.Entries, e => e.Message.Contains("compression True", StringComparison.Ordinal));
    }

    private static async Task<string> RunChromiumAsync(string chromium, string url)
    {
        var profile = Path.Combine(Path.GetTempPath(), "broker-chromium-" + Guid.NewGuid().ToString("N"));
        try
        {
            string[] arguments =
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
                "--enable-logging=stderr", "--user-data-dir=" + profile, "--dump-dom", url,
            ];

            // The test kit's runner kills the browser (and its helper processes) at the deadline.
            var result = await ExternalProcess.RunAsync(chromium, arguments, BrowserTimeout);
            if (result.TimedOut)
            {
                var console = string.Join(Environment.NewLine, result.ErrorText.Split('\n').Where(l => l.Contains("CONSOLE", StringComparison.Ordinal)));
                throw new TimeoutException("chromium did not finish in time; page console: " + console);
            }

            return result.Output;
        }
        finally
        {
            try
            {
                Directory.Delete(profile, recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }

    private static string? FindChromium()
        => new[] { "/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium" }.FirstOrDefault(File.Exists);

    /// <summary>
    /// Serves the page on 127.0.0.1, takes the page's POST /result, and holds /hold.png until then so the page's
    /// load event (which --dump-dom waits for) comes after the result.
    /// </summary>
    private sealed class PageServer : IAsyncDisposable
    {
        private readonly TcpListener listener = new(IPAddress.Loopback, 0);
        private readonly string page;
        private readonly TaskCompletionSource<string> result = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly CancellationTokenSource stop = new();
        private readonly Task loop;

        public PageServer(string page)
        {
            this.page = page;
            listener.Start();
            loop = AcceptAsync();
        }

        public string Url => $"http://127.0.0.1:{((IPEndPoint)listener.LocalEndpoint).Port}/index.html";

        public Task<string> Result => result.Task;

        public async ValueTask DisposeAsync()
        {
            await stop.CancelAsync();
            listener.Stop();
            await loop;
            stop.Dispose();
        }

        private async Task AcceptAsync()
        {
            var clients = new List<Task>();
            try
            {
                while (true)
                {
                    var client = await listener.AcceptTcpClientAsync(stop.Token);
                    clients.Add(ServeAsync(client));
                }
            }
            catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
            {
            }

            await Task.WhenAll(clients);
        }

        private async Task ServeAsync(TcpClient client)
        {
            using (client)
            {
                try
                {
                    using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stop.Token);
                    timeout.CancelAfter(BrowserTimeout);
                    var stream = client.GetStream();
                    var (requestLine, body) = await ReadRequestAsync(stream, timeout.Token);
                    var path = requestLine.Split(' ').ElementAtOrDefault(1) ?? "/";
                    if (path == "/result")
                    {
                        result.TrySetResult(body);
                        await RespondAsync(stream, "204 No Content", "text/plain", "", timeout.Token);
                    }
                    else if (path == "/hold.png")
                    {
                        await result.Task.WaitAsync(timeout.Token);
                        await RespondAsync(stream, "204 No Content", "image/png", "", timeout.Token);
                    }
                    else if (path == "/index.html")
                    {
                        await RespondAsync(stream, "200 OK", "text/html; charset=utf-8", page, timeout.Token);
                    }
                    else
                    {
                        await RespondAsync(stream, "404 Not Found", "text/plain", "", timeout.Token);
                    }
                }
                catch (Exception ex) when (ex is OperationCanceledException or IOException or SocketException)
                {
                }
            }
        }

        private static async Task<(string RequestLine, string Body)> ReadRequestAsync(NetworkStream stream, CancellationToken cancellationToken)
        {
            var data = new List<byte>();
            var buffer = new byte[4096];
            int headEnd;
            while ((headEnd = IndexOfHeadEnd(data)) < 0)
            {
                var read = await stream.ReadAsync(buffer, cancellationToken);
                if (read == 0)
                {
                    throw new IOException("closed");
                }

                data.AddRange(buffer.AsSpan(0, read));
            }

            var head = Encoding.ASCII.GetString([.. data.Take(headEnd)]);
            var lengthLine = head.Split("\r\n").FirstOrDefault(l => l.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase));
            var length = lengthLine is null ? 0 : int.Parse(lengthLine["Content-Length:".Length..].Trim(), System.Globalization.CultureInfo.InvariantCulture);
            while (data.Count < headEnd + 4 + length)
            {
                var read = await stream.ReadAsync(buffer, cancellationToken);
                if (read == 0)
                {
                    break;
                }

                data.AddRange(buffer.AsSpan(0, read));
            }

            return (head.Split("\r\n")[0], Encoding.UTF8.GetString([.. data.Skip(headEnd + 4).Take(length)]));
        }

        private static int IndexOfHeadEnd(List<byte> data)
        {
            for (var i = 0; i + 3 < data.Count; i++)
            {
                if (data[i] == '\r' && data[i + 1] == '\n' && data[i + 2] == '\r' && data[i + 3] == '\n')
                {
                    return i;
                }
            }

            return -1;
        }

        private static async Task RespondAsync(NetworkStream stream, string status, string contentType, string body, CancellationToken cancellationToken)
        {
            var bytes = Encoding.UTF8.GetBytes(body);
            var head = $"HTTP/1.1 {status}\r\nContent-Type: {contentType}\r\nContent-Length: {bytes.Length}\r\nConnection: close\r\n\r\n";
            await stream.WriteAsync(Encoding.ASCII.GetBytes(head), cancellationToken);
            await stream.WriteAsync(bytes, cancellationToken);
        }
    }
}
