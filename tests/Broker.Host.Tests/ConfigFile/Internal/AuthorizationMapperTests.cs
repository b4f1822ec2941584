using Broker.Host.Configuration.ConfigFile.Internal;
using static Broker.Host.Tests.ConfigFile.Internal.MapperTestKit;

namespace Broker.Host.Tests.ConfigFile.Internal;

public sealed class AuthorizationMapperTests
{
    private readonly ConfMappingBuilder output = new();
    private readonly ConfValueReader reader;
    private readonly AuthorizationMapper mapper;

    public AuthorizationMapperTests()
    {
        reader = new ConfValueReader(output);
        mapper = new AuthorizationMapper(reader, output, new PermissionsMapper(reader, output));
    }

    [Fact]
    public void Reads_authorization_and_no_auth_user_only()
    {
        Assert.True(mapper.TryMap(Entry("no_auth_user: svc")));
        Assert.False(mapper.TryMap(Entry("accounts {}")));
        Assert.True(AuthorizationMapper.Reads("Authorization"));
        Assert.False(AuthorizationMapper.Reads("users"));

        Assert.Equal(["Broker:Authorization:NoAuthUser=svc"], Settings(Built(output)));
    }

    [Fact]
    public void A_refused_user_leaves_no_keys_and_the_next_user_keeps_its_index()
    {
        var text = """
            authorization {
              users: [
                { nkey: UABC, user: a, permissions: { publish: "x" } }
                { user: b, permissions: { subscribe: "q g" } }
              ]
            }
            """;

        Assert.True(mapper.TryMap(Entry(text)));

        var mapping = Built(output);
        Assert.Equal(
            ["Broker:Authorization:Users:0:Permissions:Subscribe:Allow:0=q g", "Broker:Authorization:Users:0:User=b"],
            Settings(mapping));
        Assert.Equal(["Error test.conf:3:5: Nkey users do not take usernames or passwords"], Diagnostics(mapping));
    }

    [Fact]
    public void Permission_subjects_are_checked_queue_groups_only_on_subscribe()
    {
        Assert.True(mapper.TryMap(Entry("authorization {\n  permissions: {\n    publish: \"a b\"\n    subscribe: [\"ok\", \"a b..c\"]\n  }\n}")));

        Assert.Equal(
            [
                "Error test.conf:3:5: subject \"a b\" is not a valid subject",
                "Error test.conf:4:5: queue \"b..c\" is not a valid queue",
            ],
            Diagnostics(Built(output)));
    }

    [Fact]
    public void Accounts_with_users_are_refused_and_without_users_ignored()
    {
        var ignored = new IgnoredFeatures();
        var refusals = new SecurityRefusals(reader, ignored);

        Assert.True(refusals.TryMap(Entry("accounts { A: { users: [] } }")));
        Assert.True(refusals.TryMap(Entry("\naccounts { B: {} }")));
        Assert.True(refusals.TryMap(Entry("\n\ntrusted: x")));
        Assert.False(refusals.TryMap(Entry("authorization {}")));
        ignored.Report(output);

        Assert.Equal(
            [
                "Unsupported test.conf:2:1: Accounts (multi-tenancy): not supported yet, ignoring \"accounts\"",
                "Error test.conf:1:17: \"users\": not supported (users and nkeys in accounts (multi-tenancy)); the broker does not run without a security setting it cannot enforce",
                "Error test.conf:3:1: \"trusted\": not supported (trusted operator keys (JWT authentication)); the broker does not run without a security setting it cannot enforce",
            ],
            Diagnostics(Built(output)));
    }
}
