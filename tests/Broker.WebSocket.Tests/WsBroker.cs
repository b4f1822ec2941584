using System.Net;
using Broker.Adapters.Tls;
using Broker.Adapters.WebSocket;
using Broker.Core;
using Broker.TestKit;
using Microsoft.Extensions.Configuration;

namespace Broker.WebSocket.Tests;

/// <summary>Starts a <see cref="TestBroker"/> with the WebSocket (and TLS) plugins on a free loopback port.</summary>
public static class WsBroker
{
    /// <summary>ws:// on 127.0.0.1, plus <paramref name="settings"/> (keys relative to <c>Plugins:WebSocket</c>).</summary>
    public static Task<TestBroker> StartAsync(Action<BrokerOptions>? configure = null, params (string Key, string? Value)[] settings)
    {
        var all = new Dictionary<string, string?>(StringComparer.OrdinalIgnoreCase)
        {
            ["Plugins:WebSocket:host"] = "127.0.0.1",
            ["Plugins:WebSocket:port"] = "-1",
            ["Plugins:WebSocket:no_tls"] = "true",
        };
        foreach (var (key, value) in settings)
        {
            all["Plugins:WebSocket:" + key] = value;
        }

        var configuration = new ConfigurationBuilder().AddInMemoryCollection(all.Where(p => p.Value is not null)).Build();
        return TestBroker.StartAsync(configure, [new WebSocketPlugin(), new TlsPlugin()], configuration);
    }

    /// <summary>wss:// with the test CA's server certificate in the WebSocket block's own tls section.</summary>
    public static Task<TestBroker> StartSecureAsync(Action<BrokerOptions>? configure = null)
        => StartAsync(
            configure,
            ("no_tls", null),
            ("tls:cert_file", TestCertificates.Shared.ServerCertFile),
            ("tls:key_file", TestCertificates.Shared.ServerKeyFile));

    public static int WebSocketPort(this TestBroker broker) => ((IPEndPoint)broker.Server.GetEndPoint(WebSocketPlugin.ListenerName)).Port;

    public static Uri WebSocketUri(this TestBroker broker, string scheme = "ws", string path = "/")
        => new($"{scheme}://127.0.0.1:{broker.WebSocketPort()}{path}");
}
