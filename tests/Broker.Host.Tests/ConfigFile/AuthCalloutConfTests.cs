using Broker.Core;
using Broker.Host.Configuration;
using Broker.Host.Configuration.ConfigFile;
using NATS.NKeys;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// <c>authorization { auth_callout { } }</c> (nats-server 2.10; 2.9.10 does not know the key, so no comparison): the
/// keys it becomes, the options they bind to, and 2.10's texts for what it refuses, in the file (opts.go
/// <c>parseAuthCallout</c>) and when the broker starts (auth.go <c>configureAuthorization</c>: an unknown account or
/// auth user, logged there as errors, refused here).
/// </summary>
public sealed class AuthCalloutConfTests : IDisposable
{
    private static readonly string Issuer = KeyPair.CreatePair(PrefixByte.Account).GetPublicKey();
    private static readonly string XKey = KeyPair.CreatePair(PrefixByte.Curve).GetPublicKey();

    private readonly string directory = Directory.CreateTempSubdirectory("broker-conf-callout-").FullName;

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Fact]
    public void The_block_maps_onto_the_callout_keys()
    {
        var mapping = ConfMappingTests.Map($$"""
            accounts { AUTH: { users: [{user: auth, password: pw}] } }
            authorization {
              auth_callout {
                issuer: {{Issuer}}
                account: AUTH
                auth_users: [auth, other]
                xkey: {{XKey}}
              }
            }
            """);

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        Assert.Equal(Issuer, mapping.Settings["Broker:Authorization:AuthCallout:Issuer"]);
        Assert.Equal("AUTH", mapping.Settings["Broker:Authorization:AuthCallout:Account"]);
        Assert.Equal("auth", mapping.Settings["Broker:Authorization:AuthCallout:AuthUsers:0"]);
        Assert.Equal("other", mapping.Settings["Broker:Authorization:AuthCallout:AuthUsers:1"]);
        Assert.Equal(XKey, mapping.Settings["Broker:Authorization:AuthCallout:XKey"]);
    }

    [Fact]
    public void Aliases_auth_hook_acc_users_and_key_are_read_too()
    {
        var mapping = ConfMappingTests.Map($"authorization {{\n  users: [{{user: u}}]\n  auth_hook {{ issuer: {Issuer}, acc: X, users: [u], key: {XKey} }}\n}}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        Assert.Equal("X", mapping.Settings["Broker:Authorization:AuthCallout:Account"]);
        Assert.Equal("u", mapping.Settings["Broker:Authorization:AuthCallout:AuthUsers:0"]);
        Assert.Equal(XKey, mapping.Settings["Broker:Authorization:AuthCallout:XKey"]);
    }

    [Fact]
    public void The_options_bind_with_the_global_account_by_default()
    {
        var settings = Bind($"authorization {{\n  users: [{{user: auth, password: pw}}]\n  auth_callout {{ issuer: {Issuer}, auth_users: [auth] }}\n}}\n");

        var callout = settings.Broker.Authorization.AuthCallout;
        Assert.NotNull(callout);
        Assert.Equal(Issuer, callout.Issuer);
        Assert.Equal("$G", callout.Account);
        Assert.Equal(["auth"], callout.AuthUsers);
        Assert.Null(callout.XKey);
        settings.Broker.Validate();
    }

    [Theory]
    [InlineData("authorization {\n  auth_callout: 5\n}", "test.conf:2:3: Expected authorization callout to be a map/struct, got 5")]
    [InlineData("authorization {\n  auth_callout { auth_users: [a] }\n}", "test.conf:2:3: Authorization callouts require an issuer to be specified")]
    [InlineData("authorization {\n  auth_callout { issuer: ISSUER }\n}", "test.conf:2:3: Authorization callouts require authorized users to be specified")]
    [InlineData("authorization {\n  auth_callout { issuer: ISSUER, auth_users: [] }\n}", "test.conf:2:3: Authorization callouts require authorized users to be specified")]
    [InlineData("authorization {\n  auth_callout {\n    issuer: UABC\n  }\n}", "test.conf:3:5: Expected callout user to be a valid public account nkey, got \"UABC\"")]
    [InlineData("authorization {\n  auth_callout {\n    issuer: ISSUER\n    xkey: XYZ\n  }\n}", "test.conf:4:5: Expected callout xkey to be a valid public xkey, got \"XYZ\"")]
    [InlineData("authorization {\n  auth_callout {\n    issuer: ISSUER\n    auth_users: a\n  }\n}", "test.conf:4:5: Expected auth_users field to be an array, got *conf.token")]
    [InlineData("authorization {\n  auth_callout {\n    issuer: ISSUER\n    auth_users: [a]\n    allowed_accounts: [B]\n  }\n}", "test.conf:5:5: Unknown field \"allowed_accounts\" parsing authorization callout")]
    [InlineData("authorization {\n  auth_callout {\n    issuer: 5\n  }\n}", "test.conf:3:5: interface conversion: interface {} is int64, not string")]
    public void Refusals_have_nats_servers_texts(string conf, string expected)
    {
        var mapping = ConfMappingTests.Map(conf.Replace("ISSUER", Issuer, StringComparison.Ordinal));

        Assert.Equal(expected, mapping.Diagnostics.First(d => d.Kind == ConfDiagnosticKind.Error).ToString());
    }

    [Theory]
    [InlineData("authorization {\n  users: [{user: auth}]\n  auth_callout { issuer: ISSUER, account: NOPE, auth_users: [auth] }\n}", "Authorization callout account \"NOPE\" not valid")]
    [InlineData("authorization {\n  users: [{user: auth}]\n  auth_callout { issuer: ISSUER, auth_users: [auth, ghost] }\n}", "Authorization callout user \"ghost\" not valid")]
    public void Unknown_account_or_auth_user_refuses_to_start(string conf, string expected)
    {
        var error = Assert.Throws<HostConfigurationException>(() => Bind(conf.Replace("ISSUER", Issuer, StringComparison.Ordinal) + "\n"));

        Assert.Equal(expected, error.Message);
    }

    private HostSettings Bind(string text)
    {
        var path = Path.Combine(directory, $"broker-{Guid.NewGuid():N}.conf");
        File.WriteAllText(path, text);
        var commandLine = CommandLine.Parse(["-c", path]);
        Assert.Null(commandLine.Error);
        return HostSettings.Bind(HostConfiguration.Build(directory, new Dictionary<string, string>(), commandLine.Settings, _ => PluginBlocks.None).Configuration);
    }
}
