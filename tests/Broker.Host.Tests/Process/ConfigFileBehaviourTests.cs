using System.Net;
using Broker.TestKit;

namespace Broker.Host.Tests.Process;

/// <summary>
/// One realistic configuration file (in nats-server's own style: an include, variables, limits, logging, monitoring,
/// users with permissions and default permissions) given to the real host and to the reference nats-server: the same
/// clients get the same answers, -ERR for -ERR.
/// </summary>
public sealed class ConfigFileBehaviourTests : IDisposable
{
    private const string BobHash = "$2a$04$7NfJUeTZq6Y46p6BCHJNyeWrCUKXSH.TJn4o.2AVFiAUyXeMiQ0F6"; // "password"

    private readonly string limits = Path.Combine(Path.GetTempPath(), $"broker-limits-{Guid.NewGuid():N}.conf");
    private readonly string main = Path.Combine(Path.GetTempPath(), $"broker-main-{Guid.NewGuid():N}.conf");

    public void Dispose()
    {
        File.Delete(limits);
        File.Delete(main);
    }

    public static TheoryData<string, string, string> Sessions => new()
    {
        {
            "service user: allowed, denied and unlisted subjects",
            "{\"user\":\"svc\",\"pass\":\"password\",\"verbose\":false}",
            "PUB svc.secret 1\r\nx\r\nSUB other 1\r\nPUB svc.ok 1\r\nx\r\nSUB svc.work 2\r\nSUB _INBOX.a 3\r\n"
        },
        {
            "user with the default permissions",
            "{\"user\":\"viewer\",\"pass\":\"viewpw\",\"verbose\":false}",
            "PUB public.x 1\r\nx\r\nSUB public.news 1\r\nSUB private 2\r\n"
        },
        {
            "wrong password",
            "{\"user\":\"viewer\",\"pass\":\"nope\",\"verbose\":false}",
            ""
        },
        {
            "payload over the included max_payload",
            "{\"user\":\"svc\",\"pass\":\"password\",\"verbose\":false}",
            $"PUB svc.big 1025\r\n{new string('x', 1025)}\r\n"
        },
        {
            "verbose client",
            "{\"user\":\"svc\",\"pass\":\"password\",\"verbose\":true}",
            "SUB svc.a 1\r\nPUB denied 1\r\nx\r\n"
        },
    };

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Sessions))]
    public async Task The_same_file_gives_the_same_answers_as_nats_server(string session, string connect, string input)
    {
        WriteFiles();
        await using var reference = await ReferenceServer.StartAsync(await File.ReadAllTextAsync(main));
        await using var ours = await HostProcess.StartReadyAsync(["-c", main]);

        var expected = await RunAsync(reference.EndPoint, connect, input);
        var actual = await RunAsync(ours.EndPoint("client"), connect, input);

        Assert.True(expected.Lines.Count > 0, session);
        Assert.Equal(expected.ToString(), actual.ToString());
    }

    [Fact(Timeout = 60_000)]
    public async Task The_file_configures_limits_logging_and_monitoring()
    {
        WriteFiles();
        await using var ours = await HostProcess.StartReadyAsync(["-c", main]);

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var monitor = ours.EndPoint("monitor");
        Assert.Equal(IPAddress.Loopback, monitor.Address);
        var varz = await Harness.GetJsonAsync(http, new Uri($"http://127.0.0.1:{monitor.Port}"), "/varz");
        Assert.Equal(1024, varz.GetProperty("max_payload").GetInt32());
        Assert.Equal(50, varz.GetProperty("max_connections").GetInt32());
        Assert.Equal(60_000_000_000L, varz.GetProperty("ping_interval").GetInt64());
        Assert.Equal(3.0, varz.GetProperty("auth_timeout").GetDouble());

        // logtime: false drops the timestamp from log lines.
        Assert.Matches(@"^\[\d+\] \[INF\] ", ours.Lines.First(l => l.Contains("Broker is ready", StringComparison.Ordinal)));
    }

    private void WriteFiles()
    {
        File.WriteAllText(limits, """
            max_payload: 1KB
            max_connections: 50
            ping_interval: "1m"
            """);
        File.WriteAllText(main, $$"""
            # Both servers read this file; -a/-p on their command lines choose the client port.
            svc_subjects: "svc.>"
            include "{{Path.GetFileName(limits)}}"

            logtime: false
            debug: false
            http: "127.0.0.1:-1"

            # Three seconds, not one: a freshly started test host (JIT-compiled, not precompiled) on a loaded machine
            # took more than a second over its first CONNECT, and answered 'Authentication Timeout'.
            authorization {
              timeout: 3
              default_permissions: {
                publish: { deny: ">" }
                subscribe: "public.>"
              }
              users: [
                { user: svc, password: "{{BobHash}}",
                  permissions: {
                    publish: { allow: [$svc_subjects, "_INBOX.>"], deny: "svc.secret" }
                    subscribe: { allow: [$svc_subjects, "_INBOX.>"] }
                    allow_responses: true
                  } }
                { user: viewer, password: viewpw }
              ]
            }
            """);
    }

    private static async Task<Transcript> RunAsync(EndPoint endPoint, string connect, string input)
    {
        await using var client = await RawClient.ConnectAsync(endPoint);
        await client.SendAsync($"CONNECT {connect}\r\n{input}");
        return await client.PingAndCollectAsync();
    }
}
