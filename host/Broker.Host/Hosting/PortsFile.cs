using System.Globalization;
using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using System.Text.Json;
using System.Text.Json.Serialization;
using Broker.Abstractions;
using Broker.Core;
using Broker.Host.Configuration;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Hosting;

/// <summary>
/// nats-server's ports file (<c>--ports_file_dir</c>): <c>&lt;dir&gt;/&lt;executable&gt;_&lt;pid&gt;.ports</c> holding
/// <c>{"nats":["nats://127.0.0.1:4222"],"monitoring":["http://127.0.0.1:8222"]}</c> (and <c>websocket</c>), written
/// once every listener is bound and deleted on exit. Test harnesses start the server with random ports and read the
/// real ones from it.
/// </summary>
internal sealed class PortsFile : IDisposable
{
    // The WebSocket plugin's listener name and the ids of the plugins whose settings choose the URL schemes (the host
    // does not reference the plugins).
    private const string WebSocketListener = "websocket";
    private const string WebSocketPluginId = "WebSocket";

    private static readonly JsonSerializerOptions Json = new() { DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull };

    private PortsFile(string path) => Path = path;

    /// <summary>The file.</summary>
    public string Path { get; }

    /// <summary>The file name for this process in <paramref name="directory"/>.</summary>
    /// <param name="directory">The ports file folder.</param>
    /// <param name="executableName">The name the file starts with (nats-server uses argv[0]'s).</param>
    /// <returns>The full path.</returns>
    public static string PathFor(string directory, string executableName) =>
        System.IO.Path.GetFullPath(System.IO.Path.Combine(directory, $"{executableName}_{Environment.ProcessId.ToString(CultureInfo.InvariantCulture)}.ports"));

    /// <summary>Writes the file for a started broker. It appears whole: written aside, then renamed.</summary>
    /// <param name="path">The file (<see cref="PathFor"/>).</param>
    /// <param name="server">The started broker.</param>
    /// <param name="configuration">The host configuration (which listeners use TLS).</param>
    /// <returns>The file, deleted on dispose.</returns>
    /// <exception cref="IOException">The file cannot be written.</exception>
    /// <exception cref="UnauthorizedAccessException">The file cannot be written.</exception>
    public static PortsFile Write(string path, BrokerServer server, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(server);
        var temporary = System.IO.Path.Combine(System.IO.Path.GetDirectoryName(path) ?? ".", "." + System.IO.Path.GetFileName(path) + ".tmp");
        File.WriteAllText(temporary, Describe(server.EndPoints, configuration));
        File.Move(temporary, path, overwrite: true);
        return new PortsFile(path);
    }

    /// <summary>The file's JSON for these bound listeners.</summary>
    /// <param name="endPoints">The listeners by name.</param>
    /// <param name="configuration">The host configuration (which listeners use TLS).</param>
    /// <returns>The JSON text.</returns>
    public static string Describe(IReadOnlyDictionary<string, EndPoint> endPoints, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(endPoints);
        ArgumentNullException.ThrowIfNull(configuration);
        var ports = new Ports(
            Urls(endPoints, BrokerServer.ClientListenerName, ClientUsesTls(configuration) ? "tls" : "nats"),
            Urls(endPoints, BrokerServer.MonitorListenerName, "http"),
            Urls(endPoints, WebSocketListener, WebSocketUsesTls(configuration) ? "wss" : "ws"));
        return JsonSerializer.Serialize(ports, Json);
    }

    public void Dispose()
    {
        try
        {
            File.Delete(Path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Exiting anyway.
        }
    }

    /// <summary>
    /// The URLs of a listener; an any-address is replaced, as nats-server does, by every address of the machine's
    /// interfaces (of the listener's address family, since only those reach it).
    /// </summary>
    private static string[]? Urls(IReadOnlyDictionary<string, EndPoint> endPoints, string listener, string scheme)
    {
        if (!endPoints.TryGetValue(listener, out var endPoint) || endPoint is not IPEndPoint ip)
        {
            return null;
        }

        var port = ip.Port.ToString(CultureInfo.InvariantCulture);
        var addresses = ip.Address.Equals(IPAddress.Any) || ip.Address.Equals(IPAddress.IPv6Any)
            ? InterfaceAddresses(ip.AddressFamily)
            : [ip.Address];
        return [.. addresses.Select(a => $"{scheme}://{HostPort(a, port)}")];
    }

    private static List<IPAddress> InterfaceAddresses(AddressFamily family)
    {
        var addresses = new List<IPAddress>();
        foreach (var nic in NetworkInterface.GetAllNetworkInterfaces())
        {
            foreach (var unicast in nic.GetIPProperties().UnicastAddresses)
            {
                var address = unicast.Address;
                if (address.AddressFamily == family || (family == AddressFamily.InterNetworkV6 && address.AddressFamily == AddressFamily.InterNetwork))
                {
                    addresses.Add(address);
                }
            }
        }

        return addresses.Count > 0 ? addresses : [family == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Loopback : IPAddress.Loopback];
    }

    // Go's net.JoinHostPort: brackets around IPv6, no zone (Go's address text has none).
    private static string HostPort(IPAddress address, string port)
    {
        if (address.AddressFamily != AddressFamily.InterNetworkV6)
        {
            return address + ":" + port;
        }

        var text = address.ToString();
        var zone = text.IndexOf('%', StringComparison.Ordinal);
        return "[" + (zone < 0 ? text : text[..zone]) + "]:" + port;
    }

    // TLS on the client port: the TLS plugin is configured (cert_file), for the client listener (the default when no
    // listeners are named), and clear text is not also allowed (nats-server's "tls://" is for TLS required). A value
    // the plugin would refuse has stopped the start before the ports file is written.
    private static bool ClientUsesTls(IConfiguration configuration)
    {
        var tls = configuration.GetSection(HostConfiguration.PluginsSection).GetSection(Configuration.TlsFlags.PluginId);
        if (string.IsNullOrEmpty(tls["cert_file"]) || tls.GetBool("allow_non_tls", false))
        {
            return false;
        }

        var listeners = tls.GetList("listeners");
        return listeners.Count == 0 || listeners.Contains(BrokerServer.ClientListenerName, StringComparer.Ordinal);
    }

    private static bool WebSocketUsesTls(IConfiguration configuration) =>
        !configuration.GetSection(HostConfiguration.PluginsSection).GetSection(WebSocketPluginId).GetBool("no_tls", false);

    private sealed record Ports(
        [property: JsonPropertyName("nats")] string[]? Nats,
        [property: JsonPropertyName("monitoring")] string[]? Monitoring,
        [property: JsonPropertyName("websocket")] string[]? WebSocket);
}
