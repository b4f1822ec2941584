using System.Net;
using Broker.Host.Hosting;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Tests.Hosting;

/// <summary>The ports file's JSON: nats-server's field names and schemes for each listener the broker runs.</summary>
public sealed class PortsFileTests
{
    private static readonly Dictionary<string, EndPoint> AllListeners = new()
    {
        ["client"] = new IPEndPoint(IPAddress.Loopback, 4222),
        ["monitor"] = new IPEndPoint(IPAddress.Loopback, 8222),
        ["websocket"] = new IPEndPoint(IPAddress.Loopback, 8080),
        ["line"] = new IPEndPoint(IPAddress.Loopback, 7000),
    };

    [Theory]
    [InlineData(new string[0], "nats", "wss")]
    [InlineData(new[] { "Plugins:WebSocket:no_tls=true" }, "nats", "ws")]
    [InlineData(new[] { "Plugins:Tls:cert_file=c.pem", "Plugins:WebSocket:no_tls=true" }, "tls", "ws")]
    [InlineData(new[] { "Plugins:Tls:cert_file=c.pem", "Plugins:Tls:allow_non_tls=true" }, "nats", "wss")]
    [InlineData(new[] { "Plugins:Tls:cert_file=c.pem", "Plugins:Tls:listeners:0=websocket" }, "nats", "wss")]
    [InlineData(new[] { "Plugins:Tls:cert_file=c.pem", "Plugins:Tls:listeners:0=client" }, "tls", "wss")]
    public void Schemes_follow_the_tls_settings(string[] settings, string nats, string websocket)
    {
        var json = PortsFile.Describe(AllListeners, Configuration(settings));

        Assert.Equal(
            $"{{\"nats\":[\"{nats}://127.0.0.1:4222\"],\"monitoring\":[\"http://127.0.0.1:8222\"],\"websocket\":[\"{websocket}://127.0.0.1:8080\"]}}",
            json);
    }

    [Fact]
    public void Listeners_that_do_not_run_are_left_out()
    {
        var json = PortsFile.Describe(new Dictionary<string, EndPoint> { ["client"] = new IPEndPoint(IPAddress.Loopback, 4222) }, Configuration([]));

        Assert.Equal("{\"nats\":[\"nats://127.0.0.1:4222\"]}", json);
    }

    [Fact]
    public void An_any_address_lists_the_interface_addresses_of_its_family()
    {
        var json = PortsFile.Describe(new Dictionary<string, EndPoint> { ["client"] = new IPEndPoint(IPAddress.Any, 4222) }, Configuration([]));

        using var document = System.Text.Json.JsonDocument.Parse(json);
        var urls = document.RootElement.GetProperty("nats").EnumerateArray().Select(u => new Uri(u.GetString()!)).ToList();
        Assert.Contains(urls, u => u.Host == "127.0.0.1");
        Assert.All(urls, u => Assert.Equal((System.Net.Sockets.AddressFamily.InterNetwork, 4222), (IPAddress.Parse(u.Host).AddressFamily, u.Port)));
    }

    [Fact]
    public void The_file_name_is_the_executable_and_the_process_id()
    {
        Assert.Equal(
            Path.Combine(Path.GetTempPath(), $"nats-server_{Environment.ProcessId}.ports"),
            PortsFile.PathFor(Path.GetTempPath(), "nats-server"));
    }

    private static IConfiguration Configuration(string[] settings) =>
        new ConfigurationBuilder()
            .AddInMemoryCollection(settings.Select(s => s.Split('=', 2)).Select(p => new KeyValuePair<string, string?>(p[0], p[1])))
            .Build();
}
