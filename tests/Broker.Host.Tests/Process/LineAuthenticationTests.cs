using System.Text.Json;
using Broker.Core;
using Broker.TestKit;

namespace Broker.Host.Tests.Process;

/// <summary>
/// The sample third-party plugin as an authenticated adapter, in the real host: a line connection authenticates as a
/// user of the configuration file's <c>authorization</c> block, that user's permissions refuse what they do not allow
/// (with the text a NATS client gets), and the connection is listed in /connz under its protocol name.
/// </summary>
public sealed class LineAuthenticationTests : IDisposable
{
    private readonly string config = Path.Combine(Path.GetTempPath(), $"broker-line-auth-{Guid.NewGuid():N}.conf");

    public void Dispose() => File.Delete(config);

    [Fact(Timeout = 90_000)]
    public async Task A_line_connection_authenticates_as_a_configured_user_is_refused_what_it_may_not_do_and_shows_in_connz()
    {
        await File.WriteAllTextAsync(config, """
            authorization {
              users = [
                { user: meter, password: s3cret, permissions: { publish: ["telemetry.>"], subscribe: ["commands.>", "_INBOX.>"] } }
                { user: admin, password: admin }
              ]
            }
            """);
        await using var host = await HostProcess.StartReadyAsync(["-c", config, "-m", "-1"]);
        await using var admin = await RawClient.ConnectAsync(host.EndPoint("client"));
        await admin.SendAsync("CONNECT {\"verbose\":false,\"user\":\"admin\",\"pass\":\"admin\"}\r\nSUB telemetry.> 1\r\n");
        Assert.Equal(["PONG"], (await admin.PingAndCollectAsync()).Lines);

        await using var line = await RawClient.ConnectAsync(host.EndPoint("line"), readInfo: false);
        await ExpectAsync(line, "CONNECT meter s3cret", "OK");

        // Refused by the user's permissions, in nats-server's words; nothing reaches the NATS side.
        await ExpectAsync(line, "PUB alerts.fire boom", "ERR Permissions Violation for Publish to \"alerts.fire\"");
        await ExpectAsync(line, "SUB secrets.>", "ERR Permissions Violation for Subscription to \"secrets.>\"");

        // Allowed both ways.
        await ExpectAsync(line, "PUB telemetry.temp 21", "OK");
        Assert.Equal(["MSG telemetry.temp 1 2", "21", "PONG"], (await admin.PingAndCollectAsync()).Lines);
        await ExpectAsync(line, "SUB commands.>", "OK");
        await admin.SendAsync("PUB commands.reboot 3\r\nnow\r\n");
        Assert.Equal("MSG commands.reboot now", await line.ReadLineAsync());

        // Listed beside the NATS client, with its protocol as type and its user.
        using var http = new HttpClient { BaseAddress = new Uri($"http://{host.EndPoint(BrokerServer.MonitorListenerName)}"), Timeout = TimeSpan.FromSeconds(10) };
        var connz = await GetJsonAsync(http, "/connz?auth=1&subs=1");
        var listed = Assert.Single(connz.GetProperty("connections").EnumerateArray(), c => c.GetProperty("type").GetString() == "line");
        Assert.Equal("meter", listed.GetProperty("authorized_user").GetString());
        Assert.StartsWith("line 127.0.0.1:", listed.GetProperty("name").GetString(), StringComparison.Ordinal);
        Assert.Equal(["commands.>"], listed.GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()));
        Assert.Equal(1, listed.GetProperty("in_msgs").GetInt64());
        Assert.Equal(1, listed.GetProperty("out_msgs").GetInt64());
        Assert.Equal(2, (await GetJsonAsync(http, "/varz")).GetProperty("connections").GetInt32());

        // Wrong credentials: refused as a NATS CONNECT is, and remembered among the closed connections.
        await using var intruder = await RawClient.ConnectAsync(host.EndPoint("line"), readInfo: false);
        await intruder.SendAsync("CONNECT meter guess\r\n");
        Assert.Equal(["ERR Authorization Violation"], await intruder.ExpectClosedAsync());
        var closed = await GetJsonAsync(http, "/connz?state=closed");
        var refused = Assert.Single(closed.GetProperty("connections").EnumerateArray(), c => c.GetProperty("type").GetString() == "line");
        Assert.Equal("Authentication Failure", refused.GetProperty("reason").GetString());
    }

    private static async Task ExpectAsync(RawClient line, string command, string answer)
    {
        await line.SendAsync(command + "\r\n");
        Assert.Equal(answer, await line.ReadLineAsync());
    }

    private static async Task<JsonElement> GetJsonAsync(HttpClient http, string path)
    {
        using var document = JsonDocument.Parse(await http.GetStringAsync(path));
        return document.RootElement.Clone();
    }
}
