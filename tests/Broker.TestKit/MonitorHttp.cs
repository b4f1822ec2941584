using System.Net;
using System.Text.Json;
using Broker.Core;

namespace Broker.TestKit;

/// <summary>GETs of a test broker's monitoring endpoints (start it with monitoring on 127.0.0.1, port 0).</summary>
public static class MonitorHttp
{
    public static async Task<JsonElement> GetJsonAsync(TestBroker broker, string pathAndQuery)
    {
        using var http = new HttpClient { BaseAddress = BaseAddress(broker), Timeout = TimeSpan.FromSeconds(10) };
        var body = await http.GetStringAsync(pathAndQuery);
        using var document = JsonDocument.Parse(body);
        return document.RootElement.Clone();
    }

    public static async Task<string> GetTextAsync(TestBroker broker, string pathAndQuery)
    {
        using var http = new HttpClient { BaseAddress = BaseAddress(broker), Timeout = TimeSpan.FromSeconds(10) };
        return await http.GetStringAsync(pathAndQuery);
    }

    /// <summary>The /connz entry with this cid among open (or, with a state query, closed) connections.</summary>
    public static async Task<JsonElement?> ConnectionAsync(TestBroker broker, ulong cid, string query = "")
    {
        var connz = await GetJsonAsync(broker, "/connz?subs=1&auth=1" + query);
        foreach (var connection in connz.GetProperty("connections").EnumerateArray())
        {
            if (connection.GetProperty("cid").GetUInt64() == cid)
            {
                return connection;
            }
        }

        return null;
    }

    private static Uri BaseAddress(TestBroker broker)
    {
        var endPoint = (IPEndPoint)broker.Server.GetEndPoint(BrokerServer.MonitorListenerName);
        return new Uri($"http://127.0.0.1:{endPoint.Port}");
    }
}
