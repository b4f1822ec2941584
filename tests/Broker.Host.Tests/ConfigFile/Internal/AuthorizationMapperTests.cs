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
        var permissions = new PermissionsMapper(reader, output);
        mapper = new AuthorizationMapper(reader, output, new UsersMapper(reader, output, permissions), permissions, new ConfiguredUsers());
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
                { nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4, user: a, permissions: { publish: "x" } }
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
    public void Security_settings_it_cannot_enforce_are_refused_and_accounts_are_not_its()
    {
        var refusals = new SecurityRefusals(reader);

        Assert.True(refusals.TryMap(Entry("resolver_tls: x")));
        Assert.False(refusals.TryMap(Entry("accounts { A: {} }")));
        Assert.False(refusals.TryMap(Entry("authorization {}")));
        Assert.False(SecurityRefusals.Reads("accounts"));

        Assert.Equal(
            ["Error test.conf:1:1: \"resolver_tls\": not supported (account resolvers (JWT authentication)); the broker does not run without a security setting it cannot enforce"],
            Diagnostics(Built(output)));
    }
}
