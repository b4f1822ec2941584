using System.Globalization;
using System.Net;
using System.Text.Json;
using Broker.TestKit;

namespace Broker.Monitoring.Tests;

/// <summary>
/// Differential checks against the Go reference (Debian's nats-server, started with <c>-m</c>): every field its
/// answers carry that we claim to support is in ours with the same JSON kind, and bad queries get the same 400 text.
/// </summary>
public sealed class ReferenceShapeTests
{
    // Fields of nats-server 2.9.10 answers that describe features we do not have yet: the system imports nats-server
    // adds to every account (service imports, built on another branch).
    private static readonly HashSet<string> Unsupported = ["imports"];

    [Fact(Timeout = 60_000)]
    public async Task Every_field_of_the_reference_answers_is_in_ours_with_the_same_kind()
    {
        await using var reference = await StartReferenceAsync();
        await using var ours = await MonitoredBroker.StartAsync();
        await using var refClient = await ConnectAsync(reference.Nats);
        await using var ourClient = await ours.ConnectAsync(ClientConnect);
        await using var refLeaving = await ConnectAsync(reference.Nats);
        await using var ourLeaving = await ours.ConnectAsync(ClientConnect);
        await refLeaving.DisposeAsync();
        await ourLeaving.DisposeAsync();
        await SubscribeAsync(refClient);
        await SubscribeAsync(ourClient);

        // The reference also lists the test kit's port probe among its closed connections: look for ours by name.
        await Eventually.AssertAsync(async () => HasClosedShape(await GetAsync(reference.Http, "/connz?state=closed")), "the reference to record the close");
        await Eventually.AssertAsync(async () => HasClosedShape(await ours.GetJsonAsync("/connz?state=closed")), "us to record the close");

        foreach (var path in new[] { "/varz", "/connz?subs=detail", "/connz?subs=1", "/connz?state=closed&sort=reason", "/connz?state=closed&subs=detail&auth=true", "/subsz", "/subsz?subs=1&test=foo", "/accountz", "/accountz?acc=%24G", "/connz?auth=true", "/accstatz", "/accstatz?unused=1" })
        {
            var expected = await GetAsync(reference.Http, path);
            var actual = await ours.GetJsonAsync(path);
            AssertSameShape(path, expected, actual);
        }
    }

    [Theory(Timeout = 60_000)]
    [InlineData("/connz?sort=bogus")]
    [InlineData("/connz?sort=stop")]
    [InlineData("/connz?sort=reason&state=any")]
    [InlineData("/connz?limit=x")]
    [InlineData("/connz?offset=99999999999999999999")]
    [InlineData("/connz?subs=maybe")]
    [InlineData("/connz?auth=yes")]
    [InlineData("/connz?cid=x")]
    [InlineData("/connz?state=x")]
    [InlineData("/subsz?test=foo.*")]
    [InlineData("/subsz?subs=2")]
    [InlineData("/accountz?acc=NOPE")]
    [InlineData("/nothing")]
    [InlineData("/varz/")]
    public async Task Errors_match_the_reference(string path)
    {
        await using var reference = await StartReferenceAsync();
        await using var ours = await MonitoredBroker.StartAsync();
        using var expected = await reference.Http.GetAsync(path);
        var (status, body, response) = await ours.GetAsync(path);
        response.Dispose();
        Assert.Equal(expected.StatusCode, status);
        Assert.Equal(await expected.Content.ReadAsStringAsync(), body);
    }

    [Fact(Timeout = 60_000)]
    public async Task Healthz_matches_the_reference()
    {
        await using var reference = await StartReferenceAsync();
        await using var ours = await MonitoredBroker.StartAsync();
        using var expected = await reference.Http.GetAsync("/healthz");
        var (status, body, response) = await ours.GetAsync("/healthz");
        response.Dispose();
        Assert.Equal(expected.StatusCode, status);
        Assert.Equal(await expected.Content.ReadAsStringAsync(), body);
    }

    private const string ClientConnect = "{\"verbose\":false,\"name\":\"shape\",\"lang\":\"test\",\"version\":\"1.0\",\"protocol\":1}";

    private static void AssertSameShape(string path, JsonElement expected, JsonElement actual)
    {
        Assert.True(expected.ValueKind == actual.ValueKind, $"{path}: {expected.ValueKind} in nats-server, {actual.ValueKind} here");
        if (expected.ValueKind == JsonValueKind.Object)
        {
            foreach (var property in expected.EnumerateObject())
            {
                if (Unsupported.Contains(property.Name))
                {
                    continue;
                }

                Assert.True(actual.TryGetProperty(property.Name, out var ours), $"{path}: field '{property.Name}' is missing");

                // Free-form maps (http_req_stats) differ in keys by design; their values are compared by kind only.
                if (property.Name != "http_req_stats")
                {
                    AssertSameShape(path + "." + property.Name, property.Value, ours);
                }
            }
        }
        else if (expected.ValueKind == JsonValueKind.Array && expected.GetArrayLength() > 0 && actual.GetArrayLength() > 0)
        {
            // Element order differs (nats-server lists from maps), and optional fields appear on some elements only:
            // each field of any reference element must appear on some element of ours, with the same kind.
            if (expected[0].ValueKind != JsonValueKind.Object)
            {
                AssertSameShape(path + "[]", expected[0], actual[0]);
                return;
            }

            foreach (var element in expected.EnumerateArray())
            {
                foreach (var property in element.EnumerateObject())
                {
                    if (Unsupported.Contains(property.Name))
                    {
                        continue;
                    }

                    var match = actual.EnumerateArray().FirstOrDefault(e => e.ValueKind == JsonValueKind.Object && e.TryGetProperty(property.Name, out _));
                    Assert.True(match.ValueKind == JsonValueKind.Object, $"{path}[]: field '{property.Name}' is missing");
                    AssertSameShape(path + "[]." + property.Name, property.Value, match.GetProperty(property.Name));
                }
            }
        }
    }

    private static bool HasClosedShape(JsonElement connz)
        => connz.GetProperty("connections").EnumerateArray().Any(c => c.TryGetProperty("name", out var name) && name.GetString() == "shape");

    private static async Task SubscribeAsync(RawClient client)
    {
        await client.SendAsync("SUB foo 1\r\nSUB foo.* q 2\r\nPUB foo 2\r\nhi\r\n");
        await client.PingAndCollectAsync();
    }

    private static async Task<RawClient> ConnectAsync(IPEndPoint endPoint)
    {
        var client = await RawClient.ConnectAsync(endPoint);
        await client.SendAsync("CONNECT " + ClientConnect + "\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        return client;
    }

    private static async Task<JsonElement> GetAsync(HttpClient http, string path)
    {
        using var response = await http.GetAsync(path);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var document = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        return document.RootElement.Clone();
    }

    private static async Task<Reference> StartReferenceAsync()
    {
        var monitorPort = Ports.GetFreePort();
        var server = await ReferenceServer.StartAsync(null, "-m", monitorPort.ToString(CultureInfo.InvariantCulture));
        await Ports.WaitUntilListeningAsync(monitorPort, TimeSpan.FromSeconds(10));
        return new Reference(server, new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{monitorPort}"), Timeout = TimeSpan.FromSeconds(10) });
    }

    private sealed class Reference(ReferenceServer server, HttpClient http) : IAsyncDisposable
    {
        public HttpClient Http { get; } = http;

        public IPEndPoint Nats => server.EndPoint;

        public async ValueTask DisposeAsync()
        {
            Http.Dispose();
            await server.DisposeAsync();
        }
    }
}
