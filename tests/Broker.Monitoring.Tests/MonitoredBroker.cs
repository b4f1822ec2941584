using System.Net;
using System.Text.Json;
using Broker.Core;
using Broker.TestKit;

namespace Broker.Monitoring.Tests;

/// <summary>A <see cref="TestBroker"/> with monitoring on a free loopback port and an HTTP client pointed at it.</summary>
public sealed class MonitoredBroker : IAsyncDisposable
{
    private MonitoredBroker(TestBroker broker)
    {
        Broker = broker;
        MonitorEndPoint = (IPEndPoint)broker.Server.GetEndPoint(BrokerServer.MonitorListenerName);
        Http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{MonitorEndPoint.Port}"), Timeout = TimeSpan.FromSeconds(10) };
    }

    public TestBroker Broker { get; }

    public BrokerServer Server => Broker.Server;

    public IPEndPoint MonitorEndPoint { get; }

    public HttpClient Http { get; }

    public static async Task<MonitoredBroker> StartAsync(Action<BrokerOptions>? configure = null)
    {
        var broker = await TestBroker.StartAsync(options =>
        {
            options.Monitoring.Host = "127.0.0.1";
            options.Monitoring.Port = 0;
            configure?.Invoke(options);
        });
        return new MonitoredBroker(broker);
    }

    /// <summary>GETs a JSON endpoint, checks 200 and the content type, and returns the parsed document.</summary>
    public async Task<JsonElement> GetJsonAsync(string pathAndQuery)
    {
        using var response = await Http.GetAsync(pathAndQuery);
        var body = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"GET {pathAndQuery}: {(int)response.StatusCode} {body}");
        Assert.Equal("application/json", response.Content.Headers.ContentType?.MediaType);
        using var document = JsonDocument.Parse(body);
        return document.RootElement.Clone();
    }

    /// <summary>GETs a path and returns status and body, whatever the status.</summary>
    public async Task<(HttpStatusCode Status, string Body, HttpResponseMessage Response)> GetAsync(string pathAndQuery)
    {
        var response = await Http.GetAsync(pathAndQuery);
        return (response.StatusCode, await response.Content.ReadAsStringAsync(), response);
    }

    /// <summary>Connects a NATS client, sends CONNECT with the given options, and waits for its PONG.</summary>
    public async Task<RawClient> ConnectAsync(string connectJson = "{\"verbose\":false}")
    {
        var client = await RawClient.ConnectAsync(Broker.EndPoint);
        await client.SendAsync("CONNECT " + connectJson + "\r\n");
        var transcript = await client.PingAndCollectAsync();
        Assert.Equal(["PONG"], transcript.Lines);
        return client;
    }

    public async ValueTask DisposeAsync()
    {
        Http.Dispose();
        await Broker.DisposeAsync();
    }
}
