using System.Net;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Broker.Host.Tests.Process;

/// <summary>The ports file a host writes with --ports_file_dir (nats-server's Ports JSON).</summary>
internal sealed record PortsInfo(
    [property: JsonPropertyName("nats")] string[] Nats,
    [property: JsonPropertyName("monitoring")] string[]? Monitoring,
    [property: JsonPropertyName("websocket")] string[]? WebSocket)
{
    public Uri MonitoringUri => new(Monitoring![0]);

    public IPEndPoint NatsEndPoint
    {
        get
        {
            var uri = new Uri(Nats[0]);
            return new IPEndPoint(IPAddress.Parse(uri.Host), uri.Port);
        }
    }
}

/// <summary>
/// What client test harnesses (nats.net's NatsServerProcessManager, nats.js's nst) do with a server they start: wait
/// for <c>&lt;exe&gt;_&lt;pid&gt;.ports</c>, read the URLs, poll <c>/healthz</c> until it answers 200.
/// </summary>
internal static class Harness
{
    public static string PortsFilePath(string directory, string executableName, int pid) => Path.Combine(directory, $"{executableName}_{pid}.ports");

    /// <summary>Waits for the ports file of <paramref name="host"/> and reads it; fails when the host exits first.</summary>
    public static async Task<PortsInfo> WaitForPortsFileAsync(HostProcess host, string path)
    {
        var deadline = DateTime.UtcNow + HostProcess.StartTimeout;
        while (true)
        {
            if (File.Exists(path))
            {
                return JsonSerializer.Deserialize<PortsInfo>(await File.ReadAllTextAsync(path))!;
            }

            if (host.HasExited || DateTime.UtcNow > deadline)
            {
                if (host.HasExited)
                {
                    // Drains what it wrote before exiting, for the message.
                    await host.WaitForExitAsync(TimeSpan.FromSeconds(5));
                }

                throw new TimeoutException($"No ports file {path} (exited: {host.HasExited}). Output:{Environment.NewLine}{host.Output}");
            }

            await Task.Delay(50);
        }
    }

    /// <summary>Polls /healthz until it answers 200 with nats-server's body.</summary>
    public static async Task WaitForHealthyAsync(HttpClient http, Uri monitoring)
    {
        var deadline = DateTime.UtcNow + HostProcess.StartTimeout;
        while (true)
        {
            try
            {
                using var response = await http.GetAsync(new Uri(monitoring, "/healthz"));
                if (response.StatusCode == HttpStatusCode.OK)
                {
                    Assert.Equal("{\"status\":\"ok\"}", await response.Content.ReadAsStringAsync());
                    return;
                }
            }
            catch (HttpRequestException) when (DateTime.UtcNow < deadline)
            {
            }

            Assert.True(DateTime.UtcNow < deadline, "/healthz never answered 200");
            await Task.Delay(100);
        }
    }

    /// <summary>GETs a monitoring endpoint and parses its JSON.</summary>
    public static async Task<JsonElement> GetJsonAsync(HttpClient http, Uri monitoring, string path)
    {
        using var response = await http.GetAsync(new Uri(monitoring, path));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var document = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        return document.RootElement.Clone();
    }
}
