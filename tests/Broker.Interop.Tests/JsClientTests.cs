using Broker.Core.Auth;

namespace Broker.Interop.Tests;

/// <summary>
/// nats.js (the classic all-in-one <c>nats</c> package, protocol with headers and no-responders) against our broker
/// and the reference nats-server: each script runs a self-contained scenario over several connections.
/// </summary>
public sealed class JsClientTests
{
    public static TheoryData<ServerKind, string> Scenarios()
    {
        var data = new TheoryData<ServerKind, string>();
        foreach (var kind in new[] { ServerKind.Ours, ServerKind.Reference })
        {
            foreach (var script in new[] { "pubsub-headers.mjs", "request-reply.mjs", "no-responders.mjs", "wildcards.mjs", "edge-cases.mjs", "fan-in-out.mjs" })
            {
                data.Add(kind, script);
            }
        }

        return data;
    }

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Scenarios))]
    public async Task Scenario_passes(ServerKind kind, string script)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        ScenarioSummary.AssertOk(await NodeScripts.RunAsync(script, server.Url));
    }

    [Theory(Timeout = 90_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Queue_members_each_get_some_of_the_messages(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        var summary = ScenarioSummary.AssertOk(await NodeScripts.RunAsync("queue-groups.mjs", server.Url));
        var counts = summary.GetProperty("counts").EnumerateArray().Select(c => c.GetInt32()).ToList();
        Assert.Equal(3, counts.Count);
        Assert.Equal(summary.GetProperty("total").GetInt32(), counts.Sum());
        Assert.All(counts, c => Assert.True(c > 0));
    }

    [Theory(Timeout = 90_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Credentials_and_permission_errors_as_nats_js_reads_them(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.Authorization.Users.Add(new UserOptions { User = "admin", Password = "admin" });
                o.Authorization.Users.Add(new UserOptions
                {
                    User = "app",
                    Password = "app",
                    Permissions = new PermissionsOptions
                    {
                        Publish = new SubjectPermissionOptions { Allow = ["public.>", "_INBOX.>"] },
                        Subscribe = new SubjectPermissionOptions { Allow = ["public.>", "_INBOX.>"], Deny = ["public.secret", "public.work bad"] },
                    },
                });
            },
            """
            authorization {
              users = [
                { user: admin, password: admin }
                { user: app, password: app, permissions: {
                    publish: { allow: ["public.>", "_INBOX.>"] }
                    subscribe: { allow: ["public.>", "_INBOX.>"], deny: ["public.secret", "public.work bad"] } } }
              ]
            }
            """);
        var summary = ScenarioSummary.AssertOk(await NodeScripts.RunAsync("auth-permissions.mjs", server.Url));
        Assert.Equal(3, summary.GetProperty("statusErrors").GetInt32());
    }

    [Fact(Timeout = 90_000)]
    public async Task Script_failure_is_reported_not_swallowed()
    {
        // Nothing listens on this port: the script must print ok:false and exit non-zero, never pass.
        var result = await NodeScripts.RunAsync("wildcards.mjs", $"nats://127.0.0.1:{Ports.GetFreePort()}");
        Assert.False(result.TimedOut, result.ToString());
        Assert.NotEqual(0, result.ExitCode);
        Assert.Contains("\"ok\":false", result.OutputLines[^1], StringComparison.Ordinal);
    }
}
